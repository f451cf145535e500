package kube

import (
	"errors"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// typedPatch matches the API server's refusal of an applied object that
// does not fit its kind's schema: server-side apply converts the object
// to the kind's typed form first, and a value of the wrong type fails
// that conversion, which the server answers with a 500 (k8s.io/apimachinery
// managedfields: "failed to create typed patch object (NS/NAME; GVK):
// PATH: REASON", or "errors:" and one such line for each). The path
// (when it gives one) and the reason are those of the first problem.
var typedPatch = regexp.MustCompile(`failed to create typed patch object \([^)]*\): (?:errors:\s*)?(?:(\.\S*): )?([^\n]*)`)

// typedPatchRefusal recognizes that refusal, with the path and the reason
// it gives. It is not a server that could not answer: the same object
// is refused again however often it is sent.
func typedPatchRefusal(err error) (field, reason string, ok bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return "", "", false
	}
	s := status.Status()
	if s.Code != 500 {
		return "", "", false
	}
	m := typedPatch.FindStringSubmatch(s.Message)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
