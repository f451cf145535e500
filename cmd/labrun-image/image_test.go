package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// commitTime is the time of the commit the test inputs claim.
var commitTime = time.Date(2026, 12, 5, 10, 15, 0, 0, time.UTC)

func testInputs() inputs {
	return inputs{
		Binary:   []byte("\x7fELF a static labrun"),
		Helm:     []byte("\x7fELF a static labrun-helm"),
		CABundle: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		Source: source{
			Version:  "v0.0.0-20261205101500-8a8802dfe9c2",
			Revision: "8a8802dfe9c268f8b28000a6e702fcdc79d3f33f",
			Time:     commitTime,
			OS:       "linux",
			Arch:     "amd64",
		},
		Created: commitTime,
	}
}

func mustBuild(t *testing.T, in inputs) v1.Image {
	t.Helper()
	img, err := buildImage(in)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Two builds of the same inputs give the same image and the same archive,
// byte for byte; any input that differs gives another digest.
func TestSameInputsSameDigest(t *testing.T) {
	in := testInputs()
	a, b := mustBuild(t, in), mustBuild(t, in)
	if da, db := digestOf(t, a), digestOf(t, b); da != db {
		t.Fatalf("two builds of the same inputs: %s and %s", da, db)
	}
	refs := []string{"labrun.local/labrun:8a8802dfe9c2", "labrun.local/labrun:latest"}
	ta, err := writeLayout(a, refs, in.Created)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := writeLayout(b, refs, in.Created)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ta, tb) {
		t.Error("two builds of the same inputs wrote different archives")
	}

	same := digestOf(t, a)
	for name, change := range map[string]func(*inputs){
		"the binary":      func(in *inputs) { in.Binary = append(in.Binary, 0) },
		"labrun-helm":     func(in *inputs) { in.Helm = append(in.Helm, 0) },
		"the CA bundle":   func(in *inputs) { in.CABundle = append(in.CABundle, '\n') },
		"the commit time": func(in *inputs) { in.Created = in.Created.Add(time.Second) },
		"the revision":    func(in *inputs) { in.Source.Revision = "0" + in.Source.Revision[1:] },
	} {
		changed := testInputs()
		change(&changed)
		if digestOf(t, mustBuild(t, changed)) == same {
			t.Errorf("a change of %s left the digest %s", name, same)
		}
	}
}

// The config runs labrun as the non-root user, in its home, with the CA
// bundle where Go reads it, and says which commit it is of.
func TestConfig(t *testing.T) {
	img := mustBuild(t, testInputs())
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532 (non-root, numeric)", c.User)
	}
	if strings.Join(c.Entrypoint, " ") != "/usr/local/bin/labrun" || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want labrun alone", c.Entrypoint, c.Cmd)
	}
	if c.WorkingDir != "/home/labrun" {
		t.Errorf("WorkingDir %q", c.WorkingDir)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("Env %q names no SSL_CERT_FILE", c.Env)
	}
	if got := c.Labels["org.opencontainers.image.revision"]; got != testInputs().Source.Revision {
		t.Errorf("revision label %q", got)
	}
	if got := c.Labels["org.opencontainers.image.version"]; got != testInputs().Source.Version {
		t.Errorf("version label %q", got)
	}
	if !cf.Created.Equal(commitTime) || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("created %s, platform %s/%s: want the commit's time and linux/amd64", cf.Created, cf.OS, cf.Architecture)
	}
	if len(cf.RootFS.DiffIDs) != 1 || len(cf.History) != 1 {
		t.Errorf("%d layers, %d history entries: want one layer", len(cf.RootFS.DiffIDs), len(cf.History))
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCIUncompressedLayer {
		t.Errorf("manifest %s, config %s, layers %v: want OCI and one uncompressed layer", m.MediaType, m.Config.MediaType, m.Layers)
	}
}

// The layer holds exactly these entries, in this order, with these
// modes and owners, each dated the commit.
func TestLayerEntries(t *testing.T) {
	in := testInputs()
	layers, err := mustBuild(t, in).Layers()
	if err != nil {
		t.Fatal(err)
	}
	body, err := readLayer(layers[0])
	if err != nil {
		t.Fatal(err)
	}
	got, contents := listTar(t, body, in.Created)
	want := []string{
		"etc/ dir 0755 0:0",
		"etc/group file 0644 0:0",
		"etc/passwd file 0644 0:0",
		"etc/ssl/ dir 0755 0:0",
		"etc/ssl/certs/ dir 0755 0:0",
		"etc/ssl/certs/ca-certificates.crt file 0644 0:0",
		"home/ dir 0755 0:0",
		"home/labrun/ dir 0755 65532:65532",
		"tmp/ dir 1777 0:0",
		"usr/ dir 0755 0:0",
		"usr/local/ dir 0755 0:0",
		"usr/local/bin/ dir 0755 0:0",
		"usr/local/bin/labrun file 0755 0:0",
		"usr/local/bin/labrun-helm file 0755 0:0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layer entries:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if !bytes.Equal(contents["etc/ssl/certs/ca-certificates.crt"], in.CABundle) {
		t.Error("the CA bundle in the image is not the one given")
	}
	if !bytes.Equal(contents["usr/local/bin/labrun"], in.Binary) {
		t.Error("the binary in the image is not the one given")
	}
	if !bytes.Equal(contents["usr/local/bin/labrun-helm"], in.Helm) {
		t.Error("labrun-helm in the image is not the one given")
	}
	if !strings.Contains(string(contents["etc/passwd"]), "\nlabrun:x:65532:65532:labrun:/home/labrun:/sbin/nologin\n") ||
		!strings.Contains(string(contents["etc/group"]), "\nlabrun:x:65532:\n") {
		t.Errorf("passwd and group do not name the user:\n%s%s", contents["etc/passwd"], contents["etc/group"])
	}
}

// listTar lists a tar archive's entries as "name type mode uid:gid" and
// its files' contents, failing on an entry not dated mtime or carrying
// anything a second build could change (owner names, access times).
func listTar(t *testing.T, archive []byte, mtime time.Time) ([]string, map[string][]byte) {
	t.Helper()
	var list []string
	contents := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kind := "file"
		if h.Typeflag == tar.TypeDir {
			kind = "dir"
		}
		list = append(list, fmt.Sprintf("%s %s %04o %d:%d", h.Name, kind, h.Mode, h.Uid, h.Gid))
		if !h.ModTime.Equal(mtime) || h.Uname != "" || h.Gname != "" || !h.AccessTime.IsZero() || len(h.PAXRecords) > 0 {
			t.Errorf("%s: mtime %s, owner %q:%q, atime %s, PAX %v: want mtime %s and nothing else", h.Name, h.ModTime, h.Uname, h.Gname, h.AccessTime, h.PAXRecords, mtime)
		}
		if contents[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	return list, contents
}
