package runner

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os/exec"
	"slices"
	"syscall"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Class is the kind of failure that failed a step, a task or a run, so
// that a lab platform or a Job can tell a wrong answer from a cluster
// that is down from a broken lab, and say so to the right person
// (docs/exit-codes.md). A step is given its class where its failure is
// made; a task takes the class of the step failure its reason names; a
// run, the first of its failed steps' classes in Classes' order.
type Class string

// The classes of failure, each for one party.
const (
	// ClassAssertion: the system or the learner's answer is not what the
	// lab expects. An assertion, a failWhen or a write's comparison
	// failed, or the action failed in a way none of the other classes
	// names (a command that exits non-zero, an object that is not there).
	ClassAssertion Class = "assertion"
	// ClassTimeout: the step's time ran out (an until that never held
	// included: labrun cannot tell a condition that would never hold from
	// one that needed longer), or the run's.
	ClassTimeout Class = "timeout"
	// ClassTransport: the cluster did not answer: the connection was
	// refused, reset or lost, its name did not resolve, the API server
	// answered "later" (429, 5xx), or a check's wait for it passed.
	ClassTransport Class = "transport"
	// ClassForbidden: the API server refused labrun's identity (401) or
	// permission (403).
	ClassForbidden Class = "forbidden"
	// ClassConfig: the playbook or its inputs are wrong in a way only the
	// run shows: an expression that cannot be evaluated, a variable or
	// loop of the wrong shape, a spec value the action refuses, an object
	// to apply that does not fit its kind's schema, a file or program the
	// playbook names that is not there, no usable kubeconfig, an output
	// directory labrun cannot use.
	ClassConfig Class = "config"
)

// Classes lists the classes in the order in which they decide a run's
// class when several failed: the cluster not answering or refusing
// labrun comes first, since any other failure of the run may follow from
// it (a read that failed leaves zero values behind, which the steps that
// read it then trip on); then a broken lab, which grading cannot get
// past; then time running out; a wrong answer only when nothing else
// failed, so that no learner is told their answer is wrong when the
// cluster was down.
var Classes = []Class{ClassTransport, ClassForbidden, ClassConfig, ClassTimeout, ClassAssertion}

// decisive returns whichever of a and b comes first in Classes; an empty
// class gives way to any other.
func decisive(a, b Class) Class {
	ia, ib := slices.Index(Classes, a), slices.Index(Classes, b)
	if ia < 0 || (ib >= 0 && ib < ia) {
		return b
	}
	return a
}

// runClass is the class of a failed run: the most decisive class of its
// failed steps or, when none failed, why the run failed all the same:
// its time limit passed between two steps (timeout), or the learner has
// not started a task (assertion: the lab is not done).
func runClass(ctx context.Context, out *Outcome) Class {
	var c Class
	for _, s := range out.Steps {
		if s.Status == Failed {
			c = decisive(c, s.Class)
		}
	}
	switch {
	case c != "":
		return c
	case ctx.Err() != nil:
		return ClassTimeout
	}
	return ClassAssertion
}

// classed is an error of the runner's own making marked with its class,
// where the runner knows it: an expression that could not be evaluated,
// a spec value an action refused, the step's time running out.
type classed struct {
	class Class
	err   error
}

func (e *classed) Error() string { return e.err.Error() }
func (e *classed) Unwrap() error { return e.err }

// withClass marks err with class c; nil stays nil.
func withClass(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &classed{class: c, err: err}
}

// classOf is the class of a step's error: the most decisive class marked
// anywhere in its chain (joined errors included), ClassAssertion when
// none is.
func classOf(err error) Class {
	var c Class
	walkErrors(err, func(e error) { c = decisive(c, markOf(e)) })
	if c == "" {
		return ClassAssertion
	}
	return c
}

// markOf is the class one error in a chain says by its type, "" when it
// says none.
func markOf(err error) Class {
	var errno syscall.Errno
	switch e := err.(type) {
	case *classed:
		return e.class
	case *cluster.TransientError, *gaveUp, *net.DNSError:
		return ClassTransport
	case *cluster.ForbiddenError:
		return ClassForbidden
	case *actions.SpecError, *actions.ConnectError, *cluster.HelmChangeError, *cluster.InvalidObjectError:
		return ClassConfig
	case *fs.PathError:
		if errors.Is(e.Err, fs.ErrNotExist) {
			return ClassConfig
		}
	case *exec.Error:
		if errors.Is(e.Err, exec.ErrNotFound) {
			return ClassConfig // a program the playbook runs is not on PATH
		}
	case syscall.Errno:
		errno = e
	}
	if err == context.DeadlineExceeded {
		return ClassTimeout
	}
	if errno == syscall.ECONNREFUSED || errno == syscall.ECONNRESET {
		// a socket labrun reaches outside package kube (the Cilium
		// agent's): kube marks the cluster's own
		return ClassTransport
	}
	return ""
}

// walkErrors calls f on err and on every error it wraps, depth first.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, f)
		}
	}
}

// failWith fails the record with class c, unless an earlier failure of
// the step (an earlier item of its loop) gave it its class: a step's
// class is its first failure's, the one its error shows first.
func (r *StepRecord) failWith(c Class) {
	r.Status = Failed
	if r.Class == "" {
		r.Class = c
	}
}
