package helmproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Binary is the name of the Helm process's program.
const Binary = "labrun-helm"

// Options are how labrun-helm reaches the cluster: labrun's own
// --kubeconfig and --context (empty: the same defaults labrun looks at).
type Options struct {
	Kubeconfig string
	Context    string
}

// Find returns labrun-helm's path: next to the running labrun (make
// build and the image put it there), else on PATH.
func Find() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), Binary)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(Binary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the helm action runs Helm in %s, which is neither beside labrun nor on PATH (make build puts both in bin/)", Binary)
}

// Lazy starts labrun-helm on its first call and returns the same client
// afterwards; the process ends with labrun (its input closes).
func Lazy(opts Options) func() (cluster.Releases, error) {
	return sync.OnceValues(func() (cluster.Releases, error) {
		path, err := Find()
		if err != nil {
			return nil, err
		}
		c, err := Start(path, opts)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return c, nil
	})
}

// Client is cluster.Releases through a labrun-helm process. It is safe
// for concurrent use: requests carry an id, and answers come back by it.
type Client struct {
	cmd    *exec.Cmd
	stderr *tailBuffer

	wmu sync.Mutex // one line at a time on the process's input
	in  *json.Encoder

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan Response
	exited  error         // why the process's output ended, once it has
	done    chan struct{} // closed once it has
}

// Start starts path (labrun-helm) with opts.
func Start(path string, opts Options) (*Client, error) {
	var args []string
	if opts.Kubeconfig != "" {
		args = append(args, "--kubeconfig", opts.Kubeconfig)
	}
	if opts.Context != "" {
		args = append(args, "--context", opts.Context)
	}
	// It ends when its input does, which is when labrun ends, however
	// labrun ends.
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &Client{cmd: cmd, stderr: &tailBuffer{}, in: json.NewEncoder(stdin), waiting: map[uint64]chan Response{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	go c.read(stdout)
	return c, nil
}

// read hands each answer to the request waiting for it, and when the
// process's output ends, fails every request still waiting.
func (c *Client) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20) // a release's values can be large
	for sc.Scan() {
		var r Response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue // not an answer; nothing waits for it
		}
		c.mu.Lock()
		ch := c.waiting[r.ID]
		delete(c.waiting, r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	err := c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(c.done)
	c.exited = fmt.Errorf("%s stopped (%w)%s", Binary, err, c.stderr.said())
	for id, ch := range c.waiting {
		ch <- Response{ID: id, Error: &Error{Message: c.exited.Error()}}
		delete(c.waiting, id)
	}
}

// Release implements cluster.Releases. When ctx ends first, labrun-helm
// is asked to stop the request, and its answer is awaited for up to a
// second (an interrupted run stops within one).
func (c *Client) Release(ctx context.Context, req cluster.HelmRequest) (*cluster.HelmRelease, error) {
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.exited != nil {
		c.mu.Unlock()
		return nil, c.exited
	}
	c.next++
	id := c.next
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := c.send(Request{ID: id, Request: &req}); err != nil {
		// A process that stopped says why (its answer, just below),
		// better than the broken pipe does.
		select {
		case r := <-ch:
			return nil, r.Error.Decode()
		case <-time.After(time.Second):
			c.forget(id)
			return nil, err
		}
	}
	var r Response
	select {
	case r = <-ch:
	case <-ctx.Done():
		_ = c.send(Request{ID: id, Cancel: true})
		select {
		case r = <-ch:
		case <-time.After(time.Second):
			c.forget(id)
			return nil, ctx.Err()
		}
	}
	if r.Error != nil {
		return nil, r.Error.Decode()
	}
	if r.Release == nil {
		return nil, fmt.Errorf("%s answered request %d with neither a release nor an error", Binary, id)
	}
	return r.Release, nil
}

func (c *Client) send(r Request) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.in.Encode(r); err != nil {
		return fmt.Errorf("send to %s: %w", Binary, err)
	}
	return nil
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// tailBuffer keeps the last 4 KiB labrun-helm wrote on its standard
// error, to say why it stopped.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) said() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
	if s == "" {
		return ""
	}
	return ": " + s
}

var _ cluster.Releases = (*Client)(nil)
