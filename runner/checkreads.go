package runner

import (
	"encoding/json"
	"sync"
)

// readMemo shares one read among the steps of a check that make the very
// same read: the same action with the same rendered spec. A check changes
// nothing, so such steps would only read the same state twice (a lab that
// reads the agent's service list in three places, iptables-save in three,
// gets each once). Steps asking at the same time wait for the one read.
// The exception is a capture: its during steps make traffic, so the reads
// among them are not shared (a policy map's counters before and after a
// request differ), and the reads kept are forgotten once it ends.
type readMemo struct {
	mu    sync.Mutex
	reads map[string]*sharedRead
}

type sharedRead struct {
	done chan struct{}
	res  any
	err  error
}

// do returns the result of the read keyed key, running read for the first
// step that asks.
func (m *readMemo) do(key string, read func() (any, error)) (any, error) {
	m.mu.Lock()
	r, ok := m.reads[key]
	if !ok {
		if m.reads == nil {
			m.reads = map[string]*sharedRead{}
		}
		r = &sharedRead{done: make(chan struct{})}
		m.reads[key] = r
	}
	m.mu.Unlock()
	if ok {
		<-r.done
		return r.res, r.err
	}
	defer close(r.done)
	r.res, r.err = read()
	if r.err != nil {
		// a failed read is not kept: a step asking later (a retry)
		// reads again
		m.mu.Lock()
		delete(m.reads, key)
		m.mu.Unlock()
	}
	return r.res, r.err
}

// forget drops every read kept: after a capture, whose during steps
// made traffic, a read may no longer see what an earlier one did.
func (m *readMemo) forget() {
	m.mu.Lock()
	m.reads = nil
	m.mu.Unlock()
}

// readKey names a read by its action and rendered spec (every field of a
// spec is exported and JSON); ok is false when the spec cannot be named.
func readKey(action string, spec any) (string, bool) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", false
	}
	return action + "\x00" + string(b), true
}
