module github.com/labrun/labrun

go 1.26

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/expr-lang/expr v1.17.8 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.43.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.36.3 // indirect
	k8s.io/apimachinery v0.36.3 // indirect
	k8s.io/client-go v0.36.3 // indirect
)
