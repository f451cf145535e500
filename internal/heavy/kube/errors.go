package kube

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIError is a request the API server refused. Its text says what labrun
// was doing and quotes the server's reason and message, e.g.
//
//	list pods in namespace "lab": Forbidden (403): pods is forbidden: User
//	"system:serviceaccount:lab:viewer" cannot list resource "pods" ...
//
// It unwraps to the client-go *StatusError, so apierrors.IsNotFound and
// friends keep working on it.
type APIError struct {
	// Op is what labrun was doing: "apply", "get", "list", "delete", ...
	Op string `json:"op"`
	// Target names the object or collection, e.g. `Deployment "web" in namespace "lab"`.
	Target string `json:"target"`
	// Code is the HTTP status code (403, 404, 409, 422, ...).
	Code int32 `json:"code"`
	// Reason is the server's machine-readable reason (Forbidden, NotFound,
	// AlreadyExists, Conflict, Invalid, ...).
	Reason string `json:"reason"`
	// Message is the server's human-readable message, unchanged.
	Message string `json:"message"`
	// Causes lists field-level causes ("spec.replicas: Invalid value: ...")
	// for Invalid and apply Conflict errors.
	Causes []string `json:"causes"`

	extra []string // causes the message does not already say
	err   error
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.Target != "" {
			b.WriteString(" ")
			b.WriteString(e.Target)
		}
		b.WriteString(": ")
	}
	reason := e.Reason
	if reason == "" {
		reason = "Failure"
	}
	fmt.Fprintf(&b, "%s (%d): %s", reason, e.Code, e.Message)
	for _, c := range e.extra {
		b.WriteString("; ")
		b.WriteString(c)
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.err }

// wrap turns err into the error labrun reports. Server refusals become an
// *APIError; other errors (connection refused, timeouts) get the operation
// and target prefixed. All text is scrubbed of credentials. The error is
// marked with its kind of failure (markForbidden, transient), a change's
// as well as a read's: a change marked transient is still never made
// again, since the runner repeats only steps that change nothing, but its
// failure is then known for the cluster's and not the lab's.
func (c *Client) wrap(err error, op, target string) error {
	err = wrapErr(err, op, target, c.secrets.list())
	transient(&err)
	return err
}

// WrapError is wrap for the errors of calls other code makes on the
// client's configuration (Helm's action package): their text scrubbed of
// credentials and their kind of failure marked as labrun's own calls'
// are, so that a step's class does not depend on which library asked.
func (c *Client) WrapError(err error, op, target string) error { return c.wrap(err, op, target) }

// wrapErr is wrap for code without a Client (secrets are the credential
// values to scrub besides the generic patterns). A refusal of labrun's
// identity is marked (markForbidden).
func wrapErr(err error, op, target string, secrets []string) (wrapped error) {
	defer markForbidden(&wrapped)
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Status == metav1.StatusFailure || s.Code >= 400 {
			e := &APIError{
				Op:      op,
				Target:  target,
				Code:    s.Code,
				Reason:  string(s.Reason),
				Message: redactWith(s.Message, secrets),
				err:     err,
			}
			if s.Details != nil {
				for _, cause := range s.Details.Causes {
					text := redactWith(causeText(cause), secrets)
					e.Causes = append(e.Causes, text)
					// The server usually repeats the causes in its message;
					// add only those it left out, so the text is complete
					// but not doubled.
					if cause.Message == "" || !strings.Contains(s.Message, cause.Message) {
						e.extra = append(e.extra, text)
					}
				}
			}
			return e
		}
	}
	if meta.IsNoMatchError(err) {
		return &redactedError{msg: fmt.Sprintf("%s %s: %s (is the CRD installed and established?)", op, target, err.Error()), err: err}
	}
	msg := fmt.Sprintf("%s %s: %s", op, target, err.Error())
	if target == "" {
		msg = fmt.Sprintf("%s: %s", op, err.Error())
	}
	return &redactedError{msg: redactWith(msg, secrets), err: err}
}

func causeText(c metav1.StatusCause) string {
	switch {
	case c.Field != "" && c.Message != "":
		return c.Field + ": " + c.Message
	case c.Message != "":
		return c.Message
	default:
		return string(c.Type)
	}
}

// describe names an object for messages: `Deployment "web" in namespace "lab"`.
func describe(kind, namespace, name string) string {
	s := kind
	if name != "" {
		s += fmt.Sprintf(" %q", name)
	}
	if namespace != "" {
		s += fmt.Sprintf(" in namespace %q", namespace)
	}
	return s
}
