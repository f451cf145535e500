package kube

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// A refusal of labrun's identity or permission is a *cluster.ForbiddenError
// whatever call met it, made from client-go's own error values; the
// server's refusal stays inside it, so apierrors and *APIError keep
// working. A 403 about a pod's missing service account (admission, not
// RBAC) and other refusals are not marked.
func TestForbiddenIsMarked(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name      string
		err       error
		forbidden bool
	}{
		{"403", apierrors.NewForbidden(pods, "", errors.New(`User "system:serviceaccount:lab:viewer" cannot list resource "pods"`)), true},
		{"401", apierrors.NewUnauthorized("Unauthorized"), true},
		{"403 at an exec's upgrade", &httpstream.UpgradeFailureError{Cause: apierrors.NewForbidden(pods, "web", errors.New("no"))}, true},
		{"missing service account", apierrors.NewForbidden(pods, "box", errors.New(`error looking up service account lab/box: serviceaccount "box" not found`)), false},
		{"404", apierrors.NewNotFound(pods, "web"), false},
		{"409", apierrors.NewConflict(pods, "web", errors.New("changed")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := wrapErr(tc.err, "list", "pods", nil)
			var fe *cluster.ForbiddenError
			if got := errors.As(err, &fe); got != tc.forbidden {
				t.Fatalf("%v: marked forbidden %v, want %v", err, got, tc.forbidden)
			}
			if !errors.Is(err, tc.err) && !errors.As(err, new(*httpstream.UpgradeFailureError)) {
				t.Errorf("%v does not unwrap to the server's refusal", err)
			}
			var te *cluster.TransientError
			if errors.As(err, &te) {
				t.Errorf("%v marked transient (%s)", err, te.Reason)
			}
			if again := wrapErr(err, "get", "pods", nil); errors.As(again, &fe) != tc.forbidden {
				t.Errorf("wrapped again: %v loses or gains the mark", again)
			}
		})
	}
}

// Every call of the cluster, a change as well as a read, says
// what failed: the connection (a closed port: a real TCP refusal), marked
// *cluster.TransientError, or labrun's permission (a server that answers
// 403 to all but discovery), marked *cluster.ForbiddenError.
func TestEveryCallIsMarked(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serveDiscovery(w, r) {
			status(w, 403, "Forbidden")
		}
	}))
	defer deny.Close()
	pod := cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "web"}
	target := cluster.PodTarget{Namespace: "lab", Pod: "web"}
	manifest := []cluster.ManifestSource{{Text: "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: lab}\n", Label: "pod"}}
	calls := map[string]func(ctx context.Context, c *Client) error{
		"apply": func(ctx context.Context, c *Client) error {
			_, err := c.Apply(ctx, manifest, cluster.ApplyRequest{Namespace: "lab"})
			return err
		},
		"list": func(ctx context.Context, c *Client) error { _, err := c.List(ctx, pod); return err },
		"wait": func(ctx context.Context, c *Client) error {
			_, err := c.Wait(ctx, pod, func([]map[string]any) (bool, error) { return true, nil }, nil)
			return err
		},
		"scale": func(ctx context.Context, c *Client) error { _, err := c.Scale(ctx, pod, 2); return err },
		"label": func(ctx context.Context, c *Client) error {
			_, err := c.Label(ctx, pod, cluster.LabelRequest{Set: map[string]string{"a": "b"}})
			return err
		},
		"delete": func(ctx context.Context, c *Client) error {
			_, err := c.Delete(ctx, pod, cluster.DeleteRequest{})
			return err
		},
		"logs": func(ctx context.Context, c *Client) error {
			_, err := c.Logs(ctx, target, cluster.LogRequest{})
			return err
		},
		"exec": func(ctx context.Context, c *Client) error {
			_, err := c.Exec(ctx, target, cluster.ExecRequest{Argv: []string{"true"}})
			return err
		},
	}
	for name, call := range calls {
		for _, host := range []string{refused, deny.URL} {
			t.Run(name+" "+map[string]string{refused: "refused", deny.URL: "denied"}[host], func(t *testing.T) {
				c, err := NewFromConfig(&rest.Config{Host: host}, ConnectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err = call(ctx, c)
				var te *cluster.TransientError
				var fe *cluster.ForbiddenError
				switch {
				case err == nil:
					t.Fatal("the call succeeded")
				case host == refused && !errors.As(err, &te):
					t.Errorf("%v: not marked transient", err)
				case host == deny.URL && !errors.As(err, &fe):
					t.Errorf("%v: not marked forbidden", err)
				}
			})
		}
	}
}
