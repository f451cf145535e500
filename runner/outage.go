package runner

import (
	"fmt"
	"sync"
	"time"
)

// DefaultCheckOutage is how long a check waits out a cluster that does not
// answer. A check is graded while a learner waits at a Check button (lab
// platforms give it about a minute): a read-only step of a run rides out
// transient failures until its own timeout (minutes), but in a check the
// steps that meet an API server that is down fail together once this has
// passed since the first failure, each with its cause, instead of one
// after another at their timeouts.
const DefaultCheckOutage = 15 * time.Second

// outage is one check's clock for a cluster that does not answer: it
// starts at the first transient failure of any step and is the same for
// every step after.
type outage struct {
	limit time.Duration // set when the check starts
	once  sync.Once
	end   time.Time
}

// left is the time the check may still wait; the first call starts the
// clock.
func (o *outage) left() time.Duration {
	o.once.Do(func() { o.end = time.Now().Add(o.limit) })
	return time.Until(o.end)
}

// err says why a step of the check stopped trying.
func (o *outage) err() error {
	return fmt.Errorf("the cluster did not answer the check for %s", o.limit)
}
