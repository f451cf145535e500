package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// What `ctr images import` names an image of an OCI layout after, and the
// tag the OCI image-layout spec gives it; testbed/lib/images.sh writes
// its tarballs the same way.
const (
	containerdNameAnnotation = "io.containerd.image.name"
	refNameAnnotation        = "org.opencontainers.image.ref.name"
)

// writeLayout writes img as an OCI image-layout tar archive (oci-layout,
// index.json and the blobs), its index naming the image once per ref
// (repository:tag), so one import gives every name. Every entry is dated
// mtime: the archive is as reproducible as the image.
func writeLayout(img v1.Image, refs []string, mtime time.Time) ([]byte, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	idx := v1.ImageIndex(empty.Index)
	for _, ref := range refs {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture},
			Annotations: map[string]string{
				containerdNameAnnotation: ref,
				refNameAnnotation:        ref[strings.LastIndex(ref, ":")+1:],
			},
		}})
	}
	index, err := idx.RawManifest()
	if err != nil {
		return nil, err
	}
	files := []file{
		{name: "blobs/", mode: 0o755},
		{name: "blobs/sha256/", mode: 0o755},
		{name: "index.json", mode: 0o644, body: index},
		{name: "oci-layout", mode: 0o644, body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	}
	blobs, err := imageBlobs(img)
	if err != nil {
		return nil, err
	}
	for _, body := range blobs {
		sum := sha256.Sum256(body)
		files = append(files, file{name: "blobs/sha256/" + hex.EncodeToString(sum[:]), mode: 0o644, body: body})
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return writeTar(files, mtime)
}

// imageBlobs are the bytes of the image's manifest, config and layers.
// Each is stored under the SHA-256 of its bytes, which is the digest the
// manifest and the index name it by.
func imageBlobs(img v1.Image) ([][]byte, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return nil, err
	}
	blobs := [][]byte{manifest, config}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		body, err := readLayer(l)
		if err != nil {
			return nil, err
		}
		blobs = append(blobs, body)
	}
	return blobs, nil
}

// readLayer is a layer's bytes as stored: uncompressed here.
func readLayer(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
