package cluster

// InvalidObjectError is an object of an apply that the API server could
// not take as its kind's schema says (a field of the wrong type, which it
// answers with a 500 "failed to create typed patch object"): the
// manifest's fault, not the cluster's, so the runner reports it as a
// broken lab (config), never as a cluster that did not answer. package
// kube marks it; Err is the server's refusal, unchanged.
type InvalidObjectError struct {
	// Source is the index, among the sources of the Apply call, of the
	// one the object came from; File is its file ("" for inline text)
	// and Line the line its document starts on there.
	Source int
	File   string
	Line   int
	// Field is the path of the value the server named, in its own
	// notation (.spec.containers[name="web"].command; "" when it named
	// none), and Reason what it said of it ("expected string, got ...").
	Field, Reason string
	Err           error
}

func (e *InvalidObjectError) Error() string { return e.Err.Error() }
func (e *InvalidObjectError) Unwrap() error { return e.Err }
