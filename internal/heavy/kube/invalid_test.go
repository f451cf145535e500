package kube

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's refusal of an applied object's shape, as the test
// cluster answered it (testdata/typedpatch, captured by
// TestE2EApplyRefusedShape with LABRUN_CAPTURE), is recognized with the
// value it names, and is not transient: sending the object again gets
// the same answer. Other 500s stay transient.
func TestTypedPatchRefusal(t *testing.T) {
	files, err := filepath.Glob("testdata/typedpatch/*.json")
	if err != nil || len(files) < 2 {
		t.Fatalf("captured answers: %v %v", files, err)
	}
	want := map[string][2]string{
		"deployment.json": {`.spec.template.spec.containers[name="web"].command[1]`, "expected string, got &value.valueUnstructured{Value:8080}"},
		"crd.json":        {`.spec.ports[name="http"].port`, "expected string, got &value.valueUnstructured{Value:8080}"},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s metav1.Status
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		err = wrapErr(&apierrors.StatusError{ErrStatus: s}, "apply", `Deployment "web"`, nil)
		field, reason, ok := typedPatchRefusal(err)
		w := want[filepath.Base(f)]
		if !ok || field != w[0] || reason != w[1] {
			t.Errorf("%s: %v %q %q; want %q %q", f, ok, field, reason, w[0], w[1])
		}
		if why := transientReason(err); why != "" {
			t.Errorf("%s: transient (%s)", f, why)
		}
	}
	for _, tc := range []struct {
		err           error
		field, reason string
		ok            bool
		transientToo  bool
	}{
		{apierrors.NewInternalError(errors.New("etcdserver: request timed out")), "", "", false, true},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Status: "Failure", Code: 500, Message: "failed to create typed patch object (lab/w; v1, Kind=ConfigMap): errors:\n  .data.a: expected string, got &value.valueUnstructured{Value:1}\n  .data.b: expected string, got &value.valueUnstructured{Value:true}"}},
			".data.a", "expected string, got &value.valueUnstructured{Value:1}", true, false},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Status: "Failure", Code: 500, Message: "failed to create typed patch object (lab/w; v1, Kind=ConfigMap): schema error: no type found"}},
			"", "schema error: no type found", true, false},
		{apierrors.NewBadRequest("failed to create typed patch object (lab/w; v1, Kind=ConfigMap): .x: y"), "", "", false, false},
	} {
		field, reason, ok := typedPatchRefusal(tc.err)
		if ok != tc.ok || field != tc.field || reason != tc.reason {
			t.Errorf("%v: %v %q %q; want %v %q %q", tc.err, ok, field, reason, tc.ok, tc.field, tc.reason)
		}
		if got := transientReason(tc.err) != ""; got != tc.transientToo {
			t.Errorf("%v: transient %v, want %v", tc.err, got, tc.transientToo)
		}
	}
}
