package actions

import "time"

// Cost is how long one call of an action typically takes, by where its
// work happens. A check runs its steps as a graph, a few reads at a time;
// with costs it starts first the reads that lead the longest chain of
// work still ahead (an exec whose output a second exec needs before the
// one that only ends a branch), and runs the steps that only compute or
// write without waiting for a turn.
type Cost int

// The costs, from the cheapest. Every action declares one; the zero value
// is not a cost, and Register refuses it.
const (
	costUnset Cost = iota
	// InProcess: computes from earlier results or writes into the output
	// directory; no round trip to anything.
	InProcess
	// LocalRead: a Unix socket or a kernel map of this machine, about a
	// millisecond.
	LocalRead
	// RoundTrip: one request to the API server, or over the network.
	RoundTrip
	// NewProcess: starts a process on this machine or in the node's shell.
	NewProcess
	// ContainerExec: starts a process in a container through the API
	// server: a round trip, a stream, the kubelet and the container runtime
	// starting it, about twice a node's process.
	ContainerExec
)

// Weight is the cost as a typical duration on a lab VM, for ranking steps
// against one another; it is not a timeout or an estimate shown to anyone.
func (c Cost) Weight() time.Duration {
	switch c {
	case InProcess:
		return 0
	case LocalRead:
		return time.Millisecond
	case RoundTrip:
		return 10 * time.Millisecond
	case NewProcess:
		return 50 * time.Millisecond
	default:
		return 100 * time.Millisecond
	}
}

// RunsProgram says the action starts a program (in the node's shell or a
// container), whose run time is the program's: Weight is what starting
// it costs, not how long it then runs.
func (c Cost) RunsProgram() bool { return c == NewProcess || c == ContainerExec }
