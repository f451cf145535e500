//go:build tools

// Package tools imports the commands the testbed builds, so that `go mod tidy`
// keeps every dependency they need in go.mod/go.sum.
package tools

import (
	_ "github.com/cilium/cilium/cilium-dbg"
	_ "github.com/cilium/cilium/daemon"
	_ "github.com/cilium/cilium/hubble"
	_ "github.com/cilium/cilium/operator"
	_ "github.com/cilium/cilium/plugins/cilium-cni"
)
