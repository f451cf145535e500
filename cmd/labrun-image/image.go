package main

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// inputs is everything the image is made of. Two builds from equal inputs
// give the same bytes, so the same digest.
type inputs struct {
	Binary   []byte // labrun
	Helm     []byte // labrun-helm
	CABundle []byte
	Source   source
	// Created dates the image and every file in it: the commit's time
	// (or SOURCE_DATE_EPOCH), never the time of the build.
	Created time.Time
}

// buildImage makes the image from scratch: one uncompressed layer of
// layerFiles and an OCI config that runs labrun as the non-root user, in
// its home, with the CA bundle where Go finds it.
func buildImage(in inputs) (v1.Image, error) {
	layer, err := writeTar(layerFiles(in.Binary, in.Helm, in.CABundle), in.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: in.Created.UTC().Truncate(time.Second)}
	cfg := &v1.ConfigFile{
		Architecture: in.Source.Arch,
		OS:           in.Source.OS,
		Created:      created,
		Config: v1.Config{
			// Numeric, so the kubelet can tell that the image runs as
			// non-root (runAsNonRoot) without reading its /etc/passwd.
			User:       fmt.Sprintf("%d:%d", uid, gid),
			Entrypoint: []string{binaryPath},
			WorkingDir: home,
			Env: []string{
				"PATH=/usr/local/bin",
				"HOME=" + home,
				"SSL_CERT_FILE=" + caBundlePath,
			},
			Labels: labels(in.Source, created.Time),
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer:   static.NewLayer(layer, types.OCIUncompressedLayer),
		History: v1.History{Created: created, CreatedBy: "labrun cmd/labrun-image", Comment: "labrun " + in.Source.Version},
	})
}

// labels say where the image comes from, under the OCI annotations'
// names: the commit, and the module version (which ends in "+dirty" when
// the tree had uncommitted changes).
func labels(s source, created time.Time) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "labrun",
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.revision": s.Revision,
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
	}
}
