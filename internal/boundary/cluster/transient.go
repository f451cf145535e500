package cluster

// TransientError is a cluster call that failed in a way the same call may
// not meet again a moment later: the API server or a kubelet could not be
// reached or answered "later" (connection refused or reset, EOF, a lost
// HTTP/2 connection, 429, a 5xx), or an exec stream ended without the
// command's exit status. The call may still have taken effect on the
// server (a request sent before the connection broke, a command that ran
// before its stream was cut), so only a step that changes nothing may run
// it again: the runner's policy decides, package kube classifies.
type TransientError struct {
	Err error
	// Reason names the failure in a few words, for progress: "connection
	// refused", "503 ServiceUnavailable", "exit status lost".
	Reason string
}

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }
