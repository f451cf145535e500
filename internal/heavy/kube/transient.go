package kube

import (
	"context"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// transient marks *errp as a *cluster.TransientError when the call that
// failed may work unchanged a moment later, by the conventions of
// client-go: the errors its reflector backs off on and its request retry
// takes as "the server did not answer" (utilnet.IsConnectionRefused,
// IsConnectionReset, IsProbableEOF, IsHTTP2ConnectionLost), a 429 or a
// 5xx answer (an exec's refused upgrade included; not the 500 that refuses
// an applied object of the wrong shape, invalid.go), a network timeout, an
// exec stream that was never set up, and one that ended without its exit
// status. The cluster calls that read defer it on their error, and wrap
// marks every call's; whether to call again is the caller's decision,
// which knows whether the step changes the system.
func transient(errp *error) {
	if why := transientReason(*errp); why != "" {
		*errp = &cluster.TransientError{Err: *errp, Reason: why}
	}
}

// transientReason names the failure when err is transient ("" when it is
// not, or when the caller's context ended it).
func transientReason(err error) string {
	var te *cluster.TransientError
	var netErr net.Error
	switch {
	case err == nil || errors.As(err, &te):
		return ""
	case errors.Is(err, ErrExitStatusLost) || errors.Is(err, errSessionLost):
		return "exit status lost"
	case utilnet.IsConnectionRefused(err):
		return "connection refused"
	case utilnet.IsConnectionReset(err):
		return "connection reset"
	case utilnet.IsHTTP2ConnectionLost(err):
		return "HTTP/2 connection lost"
	case utilnet.IsProbableEOF(err):
		return "connection closed"
	}
	var uf *httpstream.UpgradeFailureError
	if errors.As(err, &uf) {
		// An exec's upgrade refused: by the API server, or by the kubelet
		// it could not reach (UpgradeFailureError does not unwrap).
		if code := statusCode(uf.Cause); code == 429 || code >= 500 {
			return fmt.Sprintf("exec upgrade refused with %d", code)
		}
		if code := statusCode(uf.Cause); code != 0 {
			return ""
		}
	}
	if _, _, refused := typedPatchRefusal(err); refused {
		return "" // a 500 that is the object's fault (invalid.go)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if s := status.Status(); s.Code == 429 || s.Code >= 500 {
			return fmt.Sprintf("%d %s", s.Code, s.Reason)
		}
		return ""
	}
	// A timeout of the network, not of the caller's context (which
	// client-go reports as context.DeadlineExceeded, not a net.Error).
	if errors.As(err, &netErr) && netErr.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	// SPDY, an exec's fallback, says only in words that its stream was
	// never set up (a kubelet restarting: "error dialing backend").
	if spdyNotStarted(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return "exec stream not set up"
	}
	return ""
}
