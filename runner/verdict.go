package runner

// Verdict is what a check says of a learner's work (grading.go): the one
// answer labrun check, check --targets, a Job's pods, fleet collect, a
// lab platform's line and the reports give, each formatting it as it
// shows things. A verdict that is not passed goes with the check's
// class (Outcome.Class): why the work is wrong (assertion) or why it was
// not graded.
type Verdict string

// The verdicts of a check.
const (
	// VerdictPassed: the learner's work was graded and is right.
	VerdictPassed Verdict = "passed"
	// VerdictWrong: the learner's work was graded and something is
	// wrong, or not done yet (class assertion). A graded result, like
	// VerdictPassed: the learner has something to fix.
	VerdictWrong Verdict = "wrong"
	// VerdictNotGraded: the check could not grade the work, and says
	// nothing of it. Its class says why: a broken lab or target (config),
	// a missing permission (forbidden), a cluster that did not answer
	// (transport), time that ran out (timeout); no class when the check
	// was interrupted. Someone other than the learner must act, or the
	// check be made again.
	VerdictNotGraded Verdict = "not-graded"
)

// Verdict is the check's verdict on the learner's work.
func (o *Outcome) Verdict() Verdict {
	switch {
	case o.Status == Passed:
		return VerdictPassed
	case o.Status == Failed && o.Class == ClassAssertion:
		return VerdictWrong
	}
	return VerdictNotGraded
}

// Graded reports whether v says something of the learner's work: passed
// or wrong.
func (v Verdict) Graded() bool { return v == VerdictPassed || v == VerdictWrong }
