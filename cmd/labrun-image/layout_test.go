package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The archive is an OCI image layout that names the image once per ref
// with the annotation `ctr images import` reads, as testbed/lib/images.sh
// writes its own; each blob is stored under the hash of its bytes.
func TestLayout(t *testing.T) {
	in := testInputs()
	img := mustBuild(t, in)
	refs := []string{"labrun.local/labrun:8a8802dfe9c2", "labrun.local/labrun:latest"}
	archive, err := writeLayout(img, refs, in.Created)
	if err != nil {
		t.Fatal(err)
	}
	names, contents := listTar(t, archive, in.Created)
	var blobs []string
	for name, body := range contents {
		if hexSum, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexSum != "" {
			sum := sha256.Sum256(body)
			if hex.EncodeToString(sum[:]) != hexSum {
				t.Errorf("%s holds bytes that hash to %x", name, sum)
			}
			blobs = append(blobs, name)
		}
	}
	if len(blobs) != 3 || len(names) != 7 {
		t.Errorf("entries %q: want blobs/, blobs/sha256/, 3 blobs (manifest, config, layer), index.json, oci-layout", names)
	}
	if string(contents["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %s", contents["oci-layout"])
	}
	var index v1.IndexManifest
	if err := json.Unmarshal(contents["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	digest := digestOf(t, img)
	var named []string
	for _, m := range index.Manifests {
		if m.Digest != digest || m.Platform == nil || m.Platform.OS != "linux" || m.Platform.Architecture != "amd64" {
			t.Errorf("index entry %+v: want the image %s for linux/amd64", m, digest)
		}
		if _, ok := contents["blobs/sha256/"+m.Digest.Hex]; !ok {
			t.Errorf("index names %s, which the archive does not hold", m.Digest)
		}
		name := m.Annotations["io.containerd.image.name"]
		if tag := m.Annotations["org.opencontainers.image.ref.name"]; !strings.HasSuffix(name, ":"+tag) {
			t.Errorf("ref.name %q is not the tag of %q", tag, name)
		}
		named = append(named, name)
	}
	if strings.Join(named, " ") != strings.Join(refs, " ") {
		t.Errorf("the index names %q, want %q", named, refs)
	}
}
