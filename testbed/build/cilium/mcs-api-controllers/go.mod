// Local stand-in for sigs.k8s.io/mcs-api/controllers, which the Go module
// proxy does not serve. Cilium uses a single constant from it.
module sigs.k8s.io/mcs-api/controllers

go 1.24
