package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// WaitError is returned when a wait ends before its condition held
// (deadline or cancellation). It carries the last state seen so that the
// caller can say what was expected and what there was.
type WaitError struct {
	// What is being waited for, e.g. `pods with labels app=web in namespace "lab"`.
	What string `json:"what"`
	// Objects is the last state seen (nil if nothing could be listed).
	Objects []map[string]any `json:"objects"`
	// Elapsed is how long the wait lasted.
	Elapsed time.Duration `json:"elapsed"`
	// LastError is the last list/watch error, if the last attempts failed.
	LastError string `json:"lastError"`

	err error // ctx.Err()
}

func (e *WaitError) Error() string {
	var b strings.Builder
	verb := "timed out"
	if errors.Is(e.err, context.Canceled) {
		verb = "canceled"
	}
	fmt.Fprintf(&b, "%s after %s waiting for %s; last state: %s", verb, e.Elapsed.Round(100*time.Millisecond), e.What, k8sobj.Summarize(e.Objects))
	if e.LastError != "" {
		b.WriteString("; last error: ")
		b.WriteString(e.LastError)
	}
	return b.String()
}

func (e *WaitError) Unwrap() error { return e.err }

// Backoff bounds for list/watch failures (API server restarting, network
// blip). Successful watches never wait: every event is evaluated as soon as
// it arrives.
const (
	waitRetryMin = 50 * time.Millisecond
	waitRetryMax = 2 * time.Second
)

// Wait watches the objects selected by opts until cond returns true, and
// returns them. cond sees the current set of objects (sorted by
// namespace/name; possibly empty because they do not exist yet); an error
// from it ends the wait at once: use it for states that will not get
// better, such as a Deployment past its progress deadline.
//
// It lists, evaluates cond, then watches from the list's resourceVersion
// and re-evaluates cond on every event with the whole current set, so the
// delay between a change on the server and Wait returning is one watch
// event, not a polling interval.
//
// Objects that do not exist yet, and even kinds whose CRD is not installed
// yet, are waited for. Wait re-lists when the watch expires (410 Gone),
// fails or is closed by the server, and retries failed requests with a
// bounded backoff. Requests the server refuses for good (Forbidden,
// Unauthorized, bad selector) end the wait with that error.
//
// progress, if not nil, is called with every new state (after the first
// list and after each event); the caller decides how often to show it.
// When ctx ends first, the error is a *WaitError with the last state seen.
func (c *Client) Wait(ctx context.Context, opts cluster.ObjectQuery, cond func(objs []map[string]any) (bool, error), progress func(objs []map[string]any)) (_ []map[string]any, err error) {
	defer transient(&err)
	start := time.Now()
	lo, err := listOptions(opts)
	if err != nil {
		return nil, err
	}
	w := &waiter{c: c, opts: opts, lo: lo, cond: cond, progress: progress, start: start}
	return w.run(ctx)
}

type waiter struct {
	c        *Client
	opts     cluster.ObjectQuery
	lo       metav1.ListOptions
	cond     func([]map[string]any) (bool, error)
	progress func([]map[string]any)
	start    time.Time

	what    string
	last    []map[string]any
	lastErr error
	delay   time.Duration // the next backoff after a failure
}

func (w *waiter) timeout(ctx context.Context) error {
	what := w.what
	if what == "" {
		what = w.opts.Kind
		if w.opts.Name != "" {
			what += fmt.Sprintf(" %q", w.opts.Name)
		}
	}
	e := &WaitError{What: what, Objects: w.last, Elapsed: time.Since(w.start), err: ctx.Err()}
	if w.lastErr != nil {
		e.LastError = w.lastErr.Error()
	}
	return e
}

// run resolves the kind, then lists and watches (round) until cond holds,
// the server refuses for good, or ctx ends.
func (w *waiter) run(ctx context.Context) ([]map[string]any, error) {
	w.delay = waitRetryMin
	t, err := w.resolve(ctx)
	if err != nil {
		return nil, err
	}
	w.what = describeSet(t, w.opts)
	for {
		if ctx.Err() != nil {
			return nil, w.timeout(ctx)
		}
		if res, done, err := w.round(ctx, t); done || err != nil {
			return res, err
		}
	}
}

// resolve finds the kind's resource; a kind that is not served yet (CRD
// still being installed) is retried like any other transient failure.
func (w *waiter) resolve(ctx context.Context) (target, error) {
	for {
		t, err := w.c.resource(ctx, w.opts.APIVersion, w.opts.Kind, w.opts.Namespace, w.opts.AllNamespaces)
		if err == nil {
			return t, nil
		}
		if !noMatch(err) {
			return target{}, err
		}
		if err := w.retry(ctx, err); err != nil {
			return target{}, err
		}
	}
}

// round lists, evaluates cond, then watches from the list's
// resourceVersion until cond holds (done) or the watch ends. With done
// false and a nil error, run lists again.
func (w *waiter) round(ctx context.Context, t target) ([]map[string]any, bool, error) {
	list, err := t.ri.List(ctx, w.lo)
	if err != nil {
		return nil, false, w.requestFailed(ctx, err, "list")
	}
	objs := make(map[string]map[string]any, len(list.Items))
	for i := range list.Items {
		objs[objectKey(list.Items[i].Object)] = list.Items[i].Object
	}
	if done, res, err := w.evaluate(objs); done || err != nil {
		return res, true, err
	}

	lo := w.lo
	lo.ResourceVersion = list.GetResourceVersion()
	lo.AllowWatchBookmarks = true
	watcher, err := t.ri.Watch(ctx, lo)
	if err != nil {
		return nil, false, w.requestFailed(ctx, err, "watch")
	}
	res, done, err := w.watch(ctx, watcher, objs)
	watcher.Stop()
	if done || err != nil {
		return res, done, err
	}
	if ctx.Err() != nil {
		return nil, false, w.timeout(ctx)
	}
	if w.lastErr != nil {
		// The watch failed with an error other than 410 Gone: back off
		// before listing again so that a failing server is not hammered.
		return nil, false, w.retry(ctx, w.lastErr)
	}
	w.delay = waitRetryMin
	return nil, false, nil
}

// requestFailed handles a failed list or watch (verb): the wait ends when
// ctx ended or the server refused for good; otherwise, after the backoff,
// it returns nil and run lists again.
func (w *waiter) requestFailed(ctx context.Context, err error, verb string) error {
	if ctx.Err() != nil {
		return w.timeout(ctx)
	}
	err = w.c.wrap(err, verb, w.what)
	if permanent(err) {
		return err
	}
	return w.retry(ctx, err)
}

// retry records err and waits the current backoff delay, doubling it up
// to waitRetryMax; it returns the wait's error when ctx ends first.
func (w *waiter) retry(ctx context.Context, err error) error {
	w.lastErr = err
	t := time.NewTimer(w.delay)
	defer t.Stop()
	w.delay = min(w.delay*2, waitRetryMax)
	select {
	case <-ctx.Done():
		return w.timeout(ctx)
	case <-t.C:
		return nil
	}
}

// watch consumes events until cond holds (done), ctx ends, or the watch
// must be re-established (returns done=false, err=nil).
func (w *waiter) watch(ctx context.Context, watcher watch.Interface, objs map[string]map[string]any) ([]map[string]any, bool, error) {
	w.lastErr = nil
	for {
		select {
		case <-ctx.Done():
			return nil, false, w.timeout(ctx)
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				return nil, false, nil // closed by the server: list again
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				objs[objectKey(u.Object)] = u.Object
			case watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				delete(objs, objectKey(u.Object))
			case watch.Bookmark:
				continue
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if code := statusCode(err); code == http.StatusGone || code == http.StatusRequestTimeout {
					return nil, false, nil // expired: list again at once
				}
				w.lastErr = w.c.wrap(err, "watch", w.what)
				return nil, false, nil
			default:
				continue
			}
			if done, res, err := w.evaluate(objs); done || err != nil {
				return res, true, err
			}
		}
	}
}

// evaluate snapshots the current set, reports progress and runs cond.
func (w *waiter) evaluate(objs map[string]map[string]any) (bool, []map[string]any, error) {
	snap := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		snap = append(snap, o)
	}
	sortObjects(snap)
	w.last = snap
	if w.progress != nil {
		w.progress(snap)
	}
	ok, err := w.cond(snap)
	if err != nil {
		return true, snap, fmt.Errorf("waiting for %s: %w", w.what, err)
	}
	return ok, snap, nil
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// permanent reports errors that retrying cannot fix: the server refused the
// request itself rather than failing to answer it.
func permanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) ||
		apierrors.IsNotFound(err)
}

// waitDeleted waits until the object with the given UID is gone. A new
// object with the same name (a StatefulSet pod coming back) does not count
// as the old one.
func (c *Client) waitDeleted(ctx context.Context, ref cluster.ObjectQuery, uid string) error {
	_, err := c.Wait(ctx, ref,
		func(objs []map[string]any) (bool, error) {
			for _, o := range objs {
				if u, _, _ := unstructured.NestedString(o, "metadata", "uid"); uid == "" || u == uid {
					return false, nil
				}
			}
			return true, nil
		}, nil)
	var we *WaitError
	if errors.As(err, &we) {
		we.What = describe(ref.Kind, ref.Namespace, ref.Name) + " to be deleted"
	}
	return err
}
