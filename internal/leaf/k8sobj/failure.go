package k8sobj

import (
	"fmt"
	"strings"
)

// failingReasons are the waiting reasons of a container that will not
// start without someone changing the pod, its image or what it refers to:
// waiting longer does not help. ContainerCreating, PodInitializing and a
// first ErrImagePull that turns into ImagePullBackOff are on their way.
var failingReasons = map[string]bool{
	"CrashLoopBackOff":           true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"ErrImageNeverPull":          true,
	"CreateContainerError":       true,
	"CreateContainerConfigError": true,
	"InvalidImageName":           true,
}

// PodFailure says why a pod will not become ready by itself: a container
// stuck in a failing waiting reason, or the pod's phase Failed.
type PodFailure struct {
	Namespace string
	Pod       string
	// Container is the failing container ("" when the pod failed as a
	// whole, e.g. evicted).
	Container string
	// Reason is the container's waiting reason (CrashLoopBackOff, ...) or
	// "Failed" for the pod's phase.
	Reason string
	// Cause is what the kubelet or the container said: the last
	// termination's exit code and message, or the waiting message. Empty
	// when the pod says nothing more than its reason; the caller may then
	// quote the pod's latest Warning event (LatestWarning).
	Cause string
	// Exited is set when the container ended with no termination message
	// (the default terminationMessagePolicy File, with nothing written to
	// it): its log's tail is the caller's best quote of why. Previous
	// tells that the log is the previous instance's (a restarted
	// container).
	Exited, Previous bool
}

func (f *PodFailure) Error() string {
	var b strings.Builder
	b.WriteString("pod ")
	if f.Namespace != "" {
		b.WriteString(f.Namespace + "/")
	}
	b.WriteString(f.Pod)
	if f.Container != "" {
		b.WriteString(" container " + f.Container)
	}
	if f.Reason == "Failed" {
		b.WriteString(" failed")
	} else {
		b.WriteString(" is in " + f.Reason)
	}
	if f.Cause != "" {
		b.WriteString(": " + f.Cause)
	}
	return b.String()
}

// FirstPodFailure returns the failure of the first failing pod among objs
// (other kinds are passed over).
func FirstPodFailure(objs []map[string]any) (*PodFailure, bool) {
	for _, o := range objs {
		if String(o, "kind") != "Pod" {
			continue
		}
		if f, ok := PodFailed(o); ok {
			return f, true
		}
	}
	return nil, false
}

// PodFailed tells whether a pod is failing for good (see failingReasons,
// and the phase Failed) and why. A pod being deleted is not judged: its
// containers stop on purpose.
func PodFailed(pod map[string]any) (*PodFailure, bool) {
	if Has(pod, "metadata", "deletionTimestamp") {
		return nil, false
	}
	f := &PodFailure{Namespace: String(pod, "metadata", "namespace"), Pod: String(pod, "metadata", "name")}
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, s := range list(pod, "status", field) {
			m, ok := s.(map[string]any)
			if !ok {
				continue
			}
			reason := String(m, "state", "waiting", "reason")
			if !failingReasons[reason] {
				continue
			}
			f.Container, f.Reason = String(m, "name"), reason
			if reason == "CrashLoopBackOff" {
				f.Cause, f.Exited = terminationCause(m, "lastState")
				f.Previous = f.Exited
			} else {
				f.Cause = oneLine(String(m, "state", "waiting", "message"))
			}
			return f, true
		}
	}
	if String(pod, "status", "phase") != "Failed" {
		return nil, false
	}
	f.Reason = "Failed"
	// The pod's own reason (Evicted, DeadlineExceeded, ...) says more than
	// a container killed because of it.
	if r := String(pod, "status", "reason"); r != "" {
		f.Cause = r
		if m := oneLine(String(pod, "status", "message")); m != "" {
			f.Cause += ": " + m
		}
		return f, true
	}
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, s := range list(pod, "status", field) {
			m, ok := s.(map[string]any)
			if ok && Int(m, "state", "terminated", "exitCode") != 0 {
				f.Container = String(m, "name")
				f.Cause, f.Exited = terminationCause(m, "state")
				return f, true
			}
		}
	}
	return f, true
}

// terminationCause words a container's termination (under state or
// lastState): its exit code, and its message (the termination log, or the
// log's tail with terminationMessagePolicy FallbackToLogsOnError) or else
// its reason (OOMKilled, Error, ...); silent tells that there was no
// message.
func terminationCause(status map[string]any, under string) (cause string, silent bool) {
	t, ok := field(status, under, "terminated")
	if !ok {
		return "", false
	}
	tm, _ := t.(map[string]any)
	cause = fmt.Sprintf("exit code %d", Int(tm, "exitCode"))
	if msg := oneLine(String(tm, "message")); msg != "" {
		return cause + ": " + msg, false
	}
	if r := String(tm, "reason"); r != "" {
		cause += " (" + r + ")"
	}
	return cause, true
}

// QuoteLog adds a container log's tail to the cause of a failure whose
// container exited without a message (Exited).
func (f *PodFailure) QuoteLog(log string) {
	if l := oneLine(log); l != "" {
		f.Cause += "; its log ends: " + l
	}
}

// maxCause bounds a quoted message; the end of a log is kept, since a
// program's last words are usually why it stopped.
const maxCause = 500

// oneLine joins a message's non-empty lines with "; " so that it fits the
// error's one line, keeping its last maxCause bytes.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	s = strings.Join(lines, "; ")
	if len(s) > maxCause {
		s = "..." + s[len(s)-maxCause:]
	}
	return s
}

// LatestWarning picks, among events (a namespace's Event objects), the
// latest Warning about the failure's pod that says more than the reason:
// one about the failing container first, else one about the pod. The
// kubelet's "Error: <reason>" events, which only repeat the reason, are
// passed over. It returns "" when there is none.
func LatestWarning(events []map[string]any, f *PodFailure) string {
	var best map[string]any
	bestRank, bestTime := -1, ""
	for _, e := range events {
		if String(e, "type") != "Warning" || String(e, "involvedObject", "kind") != "Pod" ||
			String(e, "involvedObject", "name") != f.Pod {
			continue
		}
		msg := String(e, "message")
		if msg == "" || msg == "Error: "+f.Reason {
			continue
		}
		rank := 0
		if fp := String(e, "involvedObject", "fieldPath"); f.Container != "" &&
			(fp == "spec.containers{"+f.Container+"}" || fp == "spec.initContainers{"+f.Container+"}") {
			rank = 1
		}
		at := eventTime(e)
		if rank > bestRank || rank == bestRank && at > bestTime {
			best, bestRank, bestTime = e, rank, at
		}
	}
	if best == nil {
		return ""
	}
	return String(best, "reason") + ": " + oneLine(String(best, "message"))
}

// eventTime is when an event was last seen, as an RFC 3339 string (which
// sorts by time to the second): the series'
// last observation, lastTimestamp, or eventTime for events without them.
func eventTime(e map[string]any) string {
	for _, p := range [][]string{{"series", "lastObservedTime"}, {"lastTimestamp"}, {"eventTime"}, {"metadata", "creationTimestamp"}} {
		if s := String(e, p...); s != "" {
			return s
		}
	}
	return ""
}
