package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The image's one user: not root, with the uid and gid distroless' and
// ko's "nonroot" use, so a PodSecurity "restricted" namespace or
// runAsNonRoot admits the image as it is.
const (
	uid      = 65532
	gid      = 65532
	userName = "labrun"
	home     = "/home/labrun"
)

// Paths in the image that other parts of the build name.
const (
	binaryPath   = "/usr/local/bin/labrun"
	helmPath     = "/usr/local/bin/labrun-helm" // beside labrun, where it looks first
	caBundlePath = "/etc/ssl/certs/ca-certificates.crt"
)

// file is one entry of a tar archive: a directory when its name ends in
// "/", else a regular file holding body.
type file struct {
	name     string // without a leading slash
	mode     int64  // permission bits, with the sticky bit for /tmp
	uid, gid int
	body     []byte
}

func (f file) isDir() bool { return strings.HasSuffix(f.name, "/") }

// layerFiles is everything in the image: the static binaries (labrun and
// labrun-helm, which labrun starts for the helm action), the CA bundle
// Go's crypto/x509 reads through SSL_CERT_FILE, /etc/passwd and
// /etc/group naming the user (so the user has a name and a home), a
// writable /tmp and the user's home, each with the directories above it.
// Everything belongs to root but the home.
func layerFiles(binary, helm, caBundle []byte) []file {
	root := func(name string, mode int64, body []byte) file {
		return file{name: name, mode: mode, body: body}
	}
	files := []file{
		root("etc/", 0o755, nil),
		root("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\n%s:x:%d:\n", userName, gid)),
		root("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, uid, gid, userName, home)),
		root("etc/ssl/", 0o755, nil),
		root("etc/ssl/certs/", 0o755, nil),
		root(caBundlePath[1:], 0o644, caBundle),
		root("home/", 0o755, nil),
		{name: home[1:] + "/", mode: 0o755, uid: uid, gid: gid},
		root("tmp/", 0o1777, nil),
		root("usr/", 0o755, nil),
		root("usr/local/", 0o755, nil),
		root("usr/local/bin/", 0o755, nil),
		root(binaryPath[1:], 0o755, binary),
		root(helmPath[1:], 0o755, helm),
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return files
}

// writeTar writes files, in their order, as a tar archive every byte of
// which follows from them and mtime: no owner names, no access or change
// times, the USTAR format (no PAX records that could vary), so the same
// files give the same archive, and the same digest, on any machine.
func writeTar(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: mtime.Truncate(time.Second),
			Format:  tar.FormatUSTAR,
		}
		if f.isDir() {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
