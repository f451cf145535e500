// Command labrun-image builds labrun's container image from static
// labrun and labrun-helm binaries of one commit and the machine's CA
// bundle, with no container engine:
// one layer from scratch, a non-root user, written as an OCI image-layout
// tarball that `ctr images import` loads (testbed/lib/labrun-image.sh
// does, into the test cluster's nodes). It is the project's build tool,
// run by `make image`, not a command of labrun's users.
//
// labrun-helm goes beside labrun, where labrun looks for it, so a Job
// grading a lab whose check reads a Helm release (the helm action) has
// it; the two talk over a pipe whose protocol is the commit's, so builds
// of two commits are refused.
//
// The image is reproducible: its files, their times and owners, its
// config and its name follow from the binaries (whose build information
// names the commit, its time and platform) and the CA bundle alone, so
// two builds of one commit give one digest.
//
// Usage:
//
//	labrun-image -binary bin/labrun -helm bin/labrun-helm [-ca-bundle FILE] [-repository NAME] -o bin/labrun-image.oci.tar
//
// It names the image REPOSITORY:REV (the commit's first 12 hex digits,
// "-dirty" for uncommitted changes) and REPOSITORY:latest, and prints
// both names and the image's digest. Every file and the config are dated
// the commit's time, or SOURCE_DATE_EPOCH when set.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "labrun-image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("labrun-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binaryPath := fs.String("binary", "bin/labrun", "the static labrun binary (CGO_ENABLED=0, built with -buildvcs=true in a git clone)")
	helmPath := fs.String("helm", "bin/labrun-helm", "the static labrun-helm binary, built as labrun was, from the same commit")
	caPath := fs.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates, PEM (Debian's ca-certificates)")
	repository := fs.String("repository", "labrun.local/labrun", "the image's name without a tag")
	out := fs.String("o", "bin/labrun-image.oci.tar", "the OCI image-layout tarball to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	in, err := readInputs(*binaryPath, *helmPath, *caPath)
	if err != nil {
		return err
	}
	img, err := buildImage(in)
	if err != nil {
		return err
	}
	refs := []string{*repository + ":" + in.Source.Tag(), *repository + ":latest"}
	archive, err := writeLayout(img, refs, in.Created)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(*out, archive); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s and %s\ndigest %s\n", *out, refs[0], refs[1], digest)
	return nil
}

// readInputs reads the binaries and the CA bundle and dates the image.
// labrun-helm must be of labrun's commit, platform and tree.
func readInputs(binaryPath, helmPath, caPath string) (inputs, error) {
	binary, err := os.ReadFile(binaryPath)
	if err != nil {
		return inputs{}, err
	}
	src, err := readSource(binary)
	if err != nil {
		return inputs{}, fmt.Errorf("%s: %w", binaryPath, err)
	}
	helm, err := os.ReadFile(helmPath)
	if err != nil {
		return inputs{}, fmt.Errorf("%w (make image builds labrun-helm beside labrun)", err)
	}
	helmSrc, err := readSource(helm)
	if err != nil {
		return inputs{}, fmt.Errorf("%s: %w", helmPath, err)
	}
	if err := sameBuild(src, helmSrc); err != nil {
		return inputs{}, fmt.Errorf("%s and %s: %w", binaryPath, helmPath, err)
	}
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return inputs{}, fmt.Errorf("%w (Debian's ca-certificates package installs it)", err)
	}
	created, err := sourceDate(src, os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return inputs{}, err
	}
	return inputs{Binary: binary, Helm: helm, CABundle: ca, Source: src, Created: created}, nil
}

// sourceDate is the time the image and its files are dated: epoch, the
// value of SOURCE_DATE_EPOCH (reproducible-builds.org), when set, else
// the commit's time from the binary.
func sourceDate(src source, epoch string) (time.Time, error) {
	if epoch == "" {
		return src.Time.UTC(), nil
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", epoch)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// writeFileAtomic writes data to path through a temporary file beside it,
// so a reader (make, an import) never sees half an archive.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
