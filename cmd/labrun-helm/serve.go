package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/helmproc"
)

// serve answers the requests read from in on out, each in a goroutine of
// its own (a playbook's parallel branches may each have a helm step),
// until in ends; then it cancels what is still running and returns once
// each has answered.
func serve(in io.Reader, out io.Writer, releases func() (cluster.Releases, error)) {
	ctx, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	enc := json.NewEncoder(out)
	var wmu sync.Mutex
	answer := func(r helmproc.Response) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = enc.Encode(r) // labrun gone: nobody to tell
	}
	var mu sync.Mutex
	running := map[uint64]context.CancelFunc{}
	var wg sync.WaitGroup
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20) // a request's values can be large
	for sc.Scan() {
		var req helmproc.Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			answer(helmproc.Response{ID: req.ID, Error: &helmproc.Error{Message: "labrun-helm: a request it cannot read: " + err.Error()}})
			continue
		}
		if req.Cancel {
			mu.Lock()
			if cancel := running[req.ID]; cancel != nil {
				cancel()
			}
			mu.Unlock()
			continue
		}
		if req.Request == nil {
			answer(helmproc.Response{ID: req.ID, Error: &helmproc.Error{Message: "labrun-helm: a request with nothing to do"}})
			continue
		}
		rctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		running[req.ID] = cancel
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer(handle(rctx, req, releases))
			mu.Lock()
			delete(running, req.ID)
			mu.Unlock()
			cancel()
		}()
	}
	cancelAll()
	wg.Wait()
}

// handle answers one request.
func handle(ctx context.Context, req helmproc.Request, releases func() (cluster.Releases, error)) helmproc.Response {
	rel, err := releases()
	if err != nil {
		err = &cluster.HelmConnectError{Err: err}
	} else {
		var r *cluster.HelmRelease
		if r, err = rel.Release(ctx, *req.Request); err == nil {
			return helmproc.Response{ID: req.ID, Release: r}
		}
	}
	if err == nil {
		err = errors.New("no release and no error")
	}
	return helmproc.Response{ID: req.ID, Error: helmproc.EncodeError(err)}
}
