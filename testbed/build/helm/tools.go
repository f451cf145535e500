//go:build tools

// Package tools imports the command the testbed builds, so that `go mod tidy`
// keeps every dependency it needs in go.mod/go.sum.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
