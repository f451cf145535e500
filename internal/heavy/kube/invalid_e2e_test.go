//go:build e2e

package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// An object whose value has the wrong type for its kind (an int in a
// container's command, the lone ${{ vars.port }} of a playbook) is
// refused by the API server with a 500 "failed to create typed patch
// object": Apply returns it as a cluster.InvalidObjectError naming the
// source it came from and the value, never as a transient failure (a
// server that did not answer), for a built-in kind and a CRD's alike.
// LABRUN_CAPTURE=DIR writes the server's answers there (testdata/typedpatch).
func TestE2EApplyRefusedShape(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	group := "e2e" + randSuffix() + ".labrun.io"
	crdName := "widgets." + group
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), cluster.ObjectQuery{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crdName}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	applyText(t, c, "", fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]s}
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: string}
`, crdName, group))
	for _, tc := range []struct {
		name, object, field, reason string
	}{
		{"deployment", `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
			"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
			"spec": {"containers": [{"name": "web", "image": "` + pythonImage + `", "command": ["python3", 8080]}]}}}}`,
			`.spec.template.spec.containers[name="web"].command[1]`, "expected string, got &value.valueUnstructured{Value:8080}"},
		{"crd", `{"apiVersion": "` + group + `/v1", "kind": "Widget", "metadata": {"name": "w"},
			"spec": {"ports": [{"name": "http", "port": 8080}]}}`,
			`.spec.ports[name="http"].port`, "expected string, got &value.valueUnstructured{Value:8080}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sources := []cluster.ManifestSource{
				{Text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine-" + tc.name + "}\n", Label: "objects[0]"},
				{Text: tc.object, Label: "objects[1]"},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			applied, err := c.Apply(ctx, sources, cluster.ApplyRequest{Namespace: ns})
			t.Logf("%v", err)
			capture(t, tc.name, err)
			var invalid *cluster.InvalidObjectError
			var te *cluster.TransientError
			switch {
			case errors.As(err, &te):
				t.Fatalf("refused as a server that did not answer (%s): %v", te.Reason, err)
			case !errors.As(err, &invalid):
				t.Fatalf("got %T %v, want a *cluster.InvalidObjectError", err, err)
			}
			if invalid.Source != 1 || invalid.File != "" || invalid.Line != 1 || invalid.Field != tc.field || invalid.Reason != tc.reason {
				t.Errorf("source %d file %q line %d field %s reason %q; want source 1, line 1, field %s, reason %q",
					invalid.Source, invalid.File, invalid.Line, invalid.Field, invalid.Reason, tc.field, tc.reason)
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != 500 {
				t.Errorf("the server's answer is not a 500: %v", err)
			}
			if len(applied) != 1 || applied[0].Name != "fine-"+tc.name {
				t.Errorf("applied %+v; want the ConfigMap before the refused object", applied)
			}
		})
	}
}

// capture writes the API server's Status of err as JSON into
// $LABRUN_CAPTURE/NAME.json.
func capture(t *testing.T, name string, err error) {
	dir := os.Getenv("LABRUN_CAPTURE")
	var status apierrors.APIStatus
	if dir == "" || !errors.As(err, &status) {
		return
	}
	data, jerr := json.MarshalIndent(status.Status(), "", "  ")
	if jerr == nil {
		jerr = os.WriteFile(dir+"/"+strings.ReplaceAll(name, "/", "-")+".json", append(data, '\n'), 0o644)
	}
	if jerr != nil {
		t.Error(jerr)
	}
}
