package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/helmproc"
)

// releasesFunc is a cluster.Releases of a function, for the protocol's
// own logic; the e2e tests drive the real one.
type releasesFunc func(context.Context, cluster.HelmRequest) (*cluster.HelmRelease, error)

func (f releasesFunc) Release(ctx context.Context, req cluster.HelmRequest) (*cluster.HelmRelease, error) {
	return f(ctx, req)
}

// serve answers each request by its id, a slow one after a quick one
// sent later, carries the kind of each failure, stops a request labrun
// cancels, and when its input ends cancels what still runs and returns.
func TestServe(t *testing.T) {
	fake := releasesFunc(func(ctx context.Context, req cluster.HelmRequest) (*cluster.HelmRelease, error) {
		switch req.Release {
		case "slow", "forever":
			<-ctx.Done()
			return nil, ctx.Err()
		case "refused":
			return nil, &cluster.HelmChangeError{Err: errors.New("values don't meet the specifications of the schema(s)")}
		case "down":
			return nil, &cluster.TransientError{Err: errors.New("dial tcp: connection refused"), Reason: "connection refused"}
		}
		return &cluster.HelmRelease{Name: req.Release, Revision: 3}, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		serve(inR, outW, func() (cluster.Releases, error) { return fake, nil })
		outW.Close()
		close(done)
	}()
	enc := json.NewEncoder(inW)
	answers := bufio.NewScanner(outR)
	next := func() helmproc.Response {
		t.Helper()
		if !answers.Scan() {
			t.Fatalf("no answer: %v", answers.Err())
		}
		var r helmproc.Response
		if err := json.Unmarshal(answers.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	send := func(r helmproc.Request) {
		t.Helper()
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	send(helmproc.Request{ID: 1, Request: &cluster.HelmRequest{Release: "slow"}})
	send(helmproc.Request{ID: 2, Request: &cluster.HelmRequest{Release: "web"}})
	if r := next(); r.ID != 2 || r.Release == nil || r.Release.Name != "web" || r.Release.Revision != 3 {
		t.Fatalf("first answer %+v; want request 2's release", r)
	}
	send(helmproc.Request{ID: 1, Cancel: true})
	if r := next(); r.ID != 1 || r.Error == nil || r.Error.Kind != helmproc.KindCanceled {
		t.Fatalf("answer to the cancelled request %+v; want a canceled error", r)
	}
	for id, want := range map[uint64]string{3: helmproc.KindChange, 4: helmproc.KindTransient} {
		name := map[uint64]string{3: "refused", 4: "down"}[id]
		send(helmproc.Request{ID: id, Request: &cluster.HelmRequest{Release: name}})
		if r := next(); r.ID != id || r.Error == nil || r.Error.Kind != want {
			t.Errorf("answer to %s: %+v; want kind %s", name, r, want)
		}
	}
	send(helmproc.Request{ID: 5, Request: &cluster.HelmRequest{Release: "forever"}})
	inW.Close()
	if r := next(); r.ID != 5 || r.Error == nil || r.Error.Kind != helmproc.KindCanceled {
		t.Errorf("answer to the request running when the input ended: %+v", r)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after its input ended")
	}
}
