package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// A change Helm could not make is the lab's (a *cluster.HelmChangeError,
// reported as config) unless the cluster did not answer, refused
// labrun, or time ran out: those keep the class labrun's own calls get,
// by the same marking (the connection's WrapError).
func TestChangeErrorClass(t *testing.T) {
	conn, err := kube.NewFromConfig(&rest.Config{Host: "https://127.0.0.1:1", BearerToken: "s3cr3t-token"}, kube.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{conn: conn}
	cm := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want string // "change", "transient", "forbidden" or "as is"
	}{
		{"chart not found", errors.New("chart ./nochart: stat ./nochart: no such file or directory"), "change"},
		{"object refused", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Invalid(field.NewPath("data"), "y", "bad")}), "change"},
		{"conflict", apierrors.NewConflict(cm, "x", errors.New("field owned by another manager")), "change"},
		{"forbidden", fmt.Errorf("failed to create resource: %w", apierrors.NewForbidden(cm, "x", errors.New("RBAC"))), "forbidden"},
		{"unavailable", apierrors.NewServiceUnavailable("etcd"), "transient"},
		{"deadline", fmt.Errorf("hooks: %w", context.DeadlineExceeded), "as is"},
		{"canceled", context.Canceled, "as is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.changeError(tc.err, `release "r" in namespace "n"`, cluster.HelmRequest{Upgrade: &cluster.HelmUpgrade{}})
			var ce *cluster.HelmChangeError
			var te *cluster.TransientError
			var fe *cluster.ForbiddenError
			kind := "as is"
			switch {
			case errors.As(got, &ce):
				kind = "change"
			case errors.As(got, &te):
				kind = "transient"
			case errors.As(got, &fe):
				kind = "forbidden"
			}
			if kind != tc.want {
				t.Errorf("%v: got %s (%T), want %s", got, kind, got, tc.want)
			}
			if !errors.Is(got, tc.err) && tc.want == "as is" {
				t.Errorf("%v no longer wraps %v", got, tc.err)
			}
		})
	}
}

// A revision is read from its Secret's labels, and a label that is not
// what Helm writes is refused, not guessed at.
func TestRevisionOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		want    cluster.HelmRevision
		wantErr string
	}{
		{"modified", map[string]string{"version": "3", "status": "superseded", "createdAt": "1764900000", "modifiedAt": "1764903600"},
			cluster.HelmRevision{Revision: 3, Status: "superseded", Updated: "2025-12-05T03:00:00Z"}, ""},
		{"created only", map[string]string{"version": "1", "status": "deployed", "createdAt": "1764900000"},
			cluster.HelmRevision{Revision: 1, Status: "deployed", Updated: "2025-12-05T02:00:00Z"}, ""},
		{"no time", map[string]string{"version": "2", "status": "failed"}, cluster.HelmRevision{Revision: 2, Status: "failed"}, ""},
		{"no version", map[string]string{"status": "deployed"}, cluster.HelmRevision{}, `label version="" is not a revision number`},
		{"version zero", map[string]string{"version": "0"}, cluster.HelmRevision{}, `label version="0"`},
		{"bad time", map[string]string{"version": "1", "modifiedAt": "yesterday"}, cluster.HelmRevision{}, `label modifiedAt/createdAt="yesterday" is not a Unix time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := revisionOf("sh.helm.release.v1.r.v1", tc.labels)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// The revisions come sorted whatever order the list gave, and the newest
// Secret is the one to decode; no Secret is no release.
func TestRevisions(t *testing.T) {
	item := func(name, version string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "rv-" + version, Labels: map[string]string{"version": version, "status": "superseded"}}}
	}
	revs, newest, err := revisions([]metav1.PartialObjectMetadata{item("r.v2", "2"), item("r.v10", "10"), item("r.v9", "9")})
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{revs[0].Revision, revs[1].Revision, revs[2].Revision}; got[0] != 2 || got[1] != 9 || got[2] != 10 {
		t.Errorf("revisions %v, want 2, 9, 10", got)
	}
	if newest.Name != "r.v10" || newest.ResourceVersion != "rv-10" {
		t.Errorf("newest %s at %s, want r.v10 at rv-10", newest.Name, newest.ResourceVersion)
	}
	if _, _, err := revisions(nil); !errors.Is(err, errNoRelease) {
		t.Errorf("no Secrets gave %v, want errNoRelease", err)
	}
}
