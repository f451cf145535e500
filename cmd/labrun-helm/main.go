// Command labrun-helm is labrun's Helm: it reads, upgrades and rolls
// back Helm releases for the helm action of one labrun run, with Helm's
// library, answering requests on its standard input (package helmproc
// has the protocol and why it is a process of its own). It is started by
// labrun, beside which it is installed, not by hand.
//
//	labrun-helm [--kubeconfig FILE] [--context NAME]
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/labrun/labrun/internal/heavy/helmrelease"
	"github.com/labrun/labrun/internal/heavy/kube"
)

func main() {
	fs := pflag.NewFlagSet("labrun-helm", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig labrun was given")
	kubeContext := fs.String("context", "", "the kubeconfig context labrun was given")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "labrun-helm: no arguments expected; labrun starts it and writes its requests on its input")
		os.Exit(2)
	}
	// The connection is made on the first request, as labrun's own is:
	// a run whose helm steps are all skipped makes none.
	releases := helmrelease.Lazy(func() (helmrelease.Connection, error) {
		c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: *kubeconfig, Context: *kubeContext, UserAgent: "labrun-helm"})
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return c, nil
	})
	serve(os.Stdin, os.Stdout, releases)
}
