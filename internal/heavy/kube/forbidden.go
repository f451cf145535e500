package kube

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// markForbidden marks *errp a *cluster.ForbiddenError when the API server
// refused labrun's identity or its permission, whatever the call: the
// runner then reports the step's failure as forbidden, and the run exits
// as for a missing permission rather than a wrong answer.
func markForbidden(errp *error) {
	if refusedIdentity(*errp) {
		*errp = &cluster.ForbiddenError{Err: *errp}
	}
}

// refusedIdentity reports whether the API server refused the request for
// who made it: 401 (credentials it does not accept) or 403 (RBAC), an
// exec's refused upgrade included. The admission error of a pod whose
// service account does not exist yet is a 403 too, but about the
// namespace's state, not labrun's identity: it is not one.
func refusedIdentity(err error) bool {
	var fe *cluster.ForbiddenError
	if err == nil || errors.As(err, &fe) {
		return false
	}
	if _, ok := missingServiceAccount(err); ok {
		return false
	}
	var uf *httpstream.UpgradeFailureError
	if errors.As(err, &uf) {
		// UpgradeFailureError does not unwrap to the server's status
		err = uf.Cause
	}
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}
