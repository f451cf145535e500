// Package helmproc runs labrun's Helm in a process of its own,
// labrun-helm, and speaks to it over its standard input and output.
//
// Helm's library links about 160 packages labrun does not otherwise
// need (Kubernetes' typed clientset and schemes, kubectl, an OCI
// registry client), whose init functions and binary every labrun process
// would pay for at start, `labrun check` and `labrun validate` included:
// about 45 ms and 20-50 MB of memory more per process, measured side by side. So the
// labrun binary links none of it; a run whose playbook has a helm step
// starts labrun-helm once, on its first such step, and sends it every
// Helm request of the run, which keeps the charts it loaded and the
// revisions it decoded for the run, as one process would.
//
// The protocol is JSON lines. labrun writes requests ({"id": N,
// "request": ...}) and cancellations ({"id": N, "cancel": true});
// labrun-helm answers each request once, in any order ({"id": N,
// "release": ...} or {"id": N, "error": ...}), and exits when its input
// ends. The connection to the cluster is labrun-helm's own, made from the
// same kubeconfig and context as labrun's (its flags), so no credential
// crosses the pipe.
package helmproc

import (
	"context"
	"errors"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Request is one line labrun writes.
type Request struct {
	ID      uint64               `json:"id"`
	Request *cluster.HelmRequest `json:"request,omitempty"`
	Cancel  bool                 `json:"cancel,omitempty"`
}

// Response is one line labrun-helm writes: the release, or the error.
type Response struct {
	ID      uint64               `json:"id"`
	Release *cluster.HelmRelease `json:"release,omitempty"`
	Error   *Error               `json:"error,omitempty"`
}

// Error is an error with the kind of failure labrun's runner classes it
// by, which the pipe would otherwise lose.
type Error struct {
	Message string `json:"message"`
	// Kind is one of the Kind... constants, "" for none of them.
	Kind string `json:"kind,omitempty"`
	// Reason is a transient failure's (cluster.TransientError.Reason).
	Reason string `json:"reason,omitempty"`
}

// The kinds of failure an Error carries.
const (
	KindChange    = "change"    // *cluster.HelmChangeError: the lab's chart or values
	KindConnect   = "connect"   // *cluster.HelmConnectError: no connection to the cluster
	KindTransient = "transient" // *cluster.TransientError: the cluster did not answer
	KindForbidden = "forbidden" // *cluster.ForbiddenError: the cluster refused labrun
	KindTimeout   = "timeout"   // context.DeadlineExceeded
	KindCanceled  = "canceled"  // context.Canceled
)

// EncodeError is err as labrun-helm sends it.
func EncodeError(err error) *Error {
	e := &Error{Message: err.Error()}
	var change *cluster.HelmChangeError
	var transient *cluster.TransientError
	var forbidden *cluster.ForbiddenError
	var connect *cluster.HelmConnectError
	switch {
	case errors.As(err, &connect):
		e.Kind = KindConnect
	case errors.As(err, &transient):
		e.Kind, e.Reason = KindTransient, transient.Reason
	case errors.As(err, &forbidden):
		e.Kind = KindForbidden
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindTimeout
	case errors.Is(err, context.Canceled):
		e.Kind = KindCanceled
	case errors.As(err, &change):
		e.Kind = KindChange
	}
	return e
}

// Decode is the error e stands for, of the type its kind names, so that
// the runner gives it the class it had in labrun-helm.
func (e *Error) Decode() error {
	msg := errors.New(e.Message)
	switch e.Kind {
	case KindChange:
		return &cluster.HelmChangeError{Err: msg}
	case KindConnect:
		return &cluster.HelmConnectError{Err: msg}
	case KindTransient:
		return &cluster.TransientError{Err: msg, Reason: e.Reason}
	case KindForbidden:
		return &cluster.ForbiddenError{Err: msg}
	case KindTimeout:
		return &contextError{msg: e.Message, err: context.DeadlineExceeded}
	case KindCanceled:
		return &contextError{msg: e.Message, err: context.Canceled}
	}
	return msg
}

// contextError is a context's error with labrun-helm's text.
type contextError struct {
	msg string
	err error
}

func (e *contextError) Error() string { return e.msg }
func (e *contextError) Unwrap() error { return e.err }
