package cluster

// ForbiddenError is a cluster call the API server refused because the
// identity labrun runs as may not make it (HTTP 403): RBAC, not the lab's
// state and not the network. Asking again changes nothing, so no step
// repeats it; the runner reports the step's failure as forbidden, and the
// run exits as for a missing permission, not as for a wrong answer.
// package kube marks it; Err is the server's refusal, unchanged.
type ForbiddenError struct {
	Err error
}

func (e *ForbiddenError) Error() string { return e.Err.Error() }
func (e *ForbiddenError) Unwrap() error { return e.Err }
