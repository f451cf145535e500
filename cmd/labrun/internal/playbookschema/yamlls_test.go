//go:build yamlls

// The editor schema tried in the language server that the common YAML
// editor plugins run (yaml-language-server, from the npm registry): this
// test speaks LSP to it over stdio, opens playbooks that point at the
// schema with the modeline docs/commands.md gives lab repositories, and reads
// the diagnostics and completions an author would see. It needs the
// server: LABRUN_YAMLLS names its command (make schema-lsp installs it and
// sets it); run with -tags yamlls.
package playbookschema

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lspClient is the client side of one language server process.
type lspClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex
	nextID int
	// replies to our requests by id; diagnostics by document URI
	replies map[int]chan json.RawMessage
	diags   map[string]chan []lspDiagnostic
	stderr  strings.Builder
}

type lspDiagnostic struct {
	Range struct {
		Start struct{ Line, Character int }
	}
	Message  string
	Severity int
}

type lspMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func startServer(t *testing.T, root string) *lspClient {
	t.Helper()
	server := os.Getenv("LABRUN_YAMLLS")
	if server == "" {
		t.Fatal("LABRUN_YAMLLS is not set: it names the yaml-language-server command (make schema-lsp installs it)")
	}
	cmd := exec.Command(server, "--stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &lspClient{t: t, cmd: cmd, in: in, replies: map[int]chan json.RawMessage{}, diags: map[string]chan []lspDiagnostic{}}
	cmd.Stderr = &lockedWriter{mu: &c.mu, b: &c.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", server, err)
	}
	t.Cleanup(func() {
		c.request("shutdown", nil)
		c.notify("exit", nil)
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // only stops a hang
			cmd.Process.Kill()
			<-done
		}
	})
	go c.read(bufio.NewReader(out))
	rootURI := "file://" + root
	c.request("initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   rootURI,
		"capabilities": map[string]any{
			"workspace": map[string]any{"configuration": true},
			"textDocument": map[string]any{
				"publishDiagnostics": map[string]any{},
				"completion":         map[string]any{"completionItem": map[string]any{"snippetSupport": false}},
			},
		},
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "lab"}},
	})
	c.notify("initialized", map[string]any{})
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": settings()})
	return c
}

// settings are an editor's defaults for the YAML plugin; the schema comes
// from each file's modeline.
func settings() map[string]any {
	return map[string]any{"yaml": map[string]any{
		"validate": true, "completion": true, "hover": true,
		"schemaStore": map[string]any{"enable": false},
	}}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (c *lspClient) send(m map[string]any) {
	m["jsonrpc"] = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (c *lspClient) notify(method string, params any) {
	c.send(map[string]any{"method": method, "params": params})
}

// request sends a request and waits for its reply.
func (c *lspClient) request(method string, params any) json.RawMessage {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.replies[id] = ch
	c.mu.Unlock()
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
	return await(c, ch, "reply to "+method)
}

// await waits for what the server sends on ch; the deadline only stops a
// hang, naming what never came with the server's stderr.
func await[T any](c *lspClient, ch chan T, what string) T {
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		c.t.Fatalf("no %s from the language server; its stderr:\n%s", what, c.serverStderr())
		var zero T
		return zero
	}
}

func (c *lspClient) serverStderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

func (c *lspClient) diagChan(uri string) chan []lspDiagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.diags[uri]
	if !ok {
		ch = make(chan []lspDiagnostic, 16)
		c.diags[uri] = ch
	}
	return ch
}

// read dispatches the server's messages: replies, diagnostics, and the
// requests a server makes of its client (configuration, registrations).
func (c *lspClient) read(r *bufio.Reader) {
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m lspMessage
		if err := json.Unmarshal(body, &m); err != nil {
			continue
		}
		switch {
		case m.Method == "textDocument/publishDiagnostics":
			var p struct {
				URI         string          `json:"uri"`
				Diagnostics []lspDiagnostic `json:"diagnostics"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				c.diagChan(p.URI) <- p.Diagnostics
			}
		case m.Method == "workspace/configuration":
			var p struct{ Items []struct{ Section string } }
			json.Unmarshal(m.Params, &p)
			var out []any
			for _, it := range p.Items {
				s := settings()["yaml"]
				if it.Section != "yaml" {
					s = nil
				}
				out = append(out, s)
			}
			c.send(map[string]any{"id": m.ID, "result": out})
		case m.Method != "" && m.ID != nil:
			c.send(map[string]any{"id": m.ID, "result": nil})
		case m.Method == "" && m.ID != nil:
			id, err := strconv.Atoi(string(m.ID))
			if err != nil {
				continue
			}
			c.mu.Lock()
			ch := c.replies[id]
			delete(c.replies, id)
			c.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- m.Error
				} else {
					ch <- m.Result
				}
			}
		}
	}
}

// open opens a document and returns the diagnostics the server publishes
// for it once it has validated it against the schema.
func (c *lspClient) open(path, text string) []lspDiagnostic {
	uri := "file://" + path
	ch := c.diagChan(uri)
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "yaml", "version": 1, "text": text,
	}})
	return await(c, ch, "diagnostics for "+path)
}

func (c *lspClient) complete(path string, line, char int) []string {
	r := c.request("textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": "file://" + path},
		"position":     map[string]any{"line": line, "character": char},
	})
	var list struct {
		Items []struct {
			Label string `json:"label"`
		} `json:"items"`
	}
	if err := json.Unmarshal(r, &list); err != nil {
		c.t.Fatalf("completion reply %s: %v", r, err)
	}
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	return labels
}

// lab lays out a lab repository as docs/commands.md tells authors to: the
// schema installed with `labrun schema --install`, playbooks pointing at it.
// The modeline is the one labrun schema --install prints for the
// playbooks' directory.
func lab(t *testing.T) (dir, modeline string) {
	dir = t.TempDir()
	path, err := Install(filepath.Join(dir, ".labrun"))
	if err != nil {
		t.Fatal(err)
	}
	modeline, err = Modeline(filepath.Join(dir, "playbooks"), path)
	if err != nil {
		t.Fatal(err)
	}
	return dir, modeline + "\n"
}

func messages(ds []lspDiagnostic) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%d:%d: %s", d.Range.Start.Line+1, d.Range.Start.Character+1, d.Message))
	}
	return strings.Join(s, "\n")
}

func TestLanguageServer(t *testing.T) {
	root, modeline := lab(t)
	c := startServer(t, root)
	doc := func(name, text string) (string, []lspDiagnostic) {
		p := filepath.Join(root, "playbooks", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text = modeline + text
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, c.open(p, text)
	}

	t.Run("every playbook and example of the repository is clean", func(t *testing.T) {
		files, _ := filepath.Glob("../../../../playbooks/*.yaml")
		ex, _ := filepath.Glob("../../../../examples/*.yaml")
		exc, _ := filepath.Glob("../../../../examples/cluster/*.yaml")
		files = append(append(files, ex...), exc...)
		n := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "\nsteps:") {
				continue // a vars file
			}
			text := strings.Replace(string(b), "# yaml-language-server:", "# was:", 1)
			_, ds := doc("repo-"+filepath.Base(f), text)
			if len(ds) > 0 {
				t.Errorf("%s: diagnostics for a valid playbook:\n%s", f, messages(ds))
			}
			n++
		}
		if n < 5 {
			t.Fatalf("only %d playbooks tried", n)
		}
	})

	cases := []struct {
		name, text string
		want       []string // each must be in some diagnostic
		refuse     []string // none may be in any
		line       int      // 1-based line of the first wanted diagnostic in text (after the modeline)
	}{
		{"misspelt action", "name: x\nsteps:\n  - id: a\n    rnu: {argv: [true]}\n",
			[]string{`Property rnu is not allowed.`}, []string{`Missing property "apply"`, `Missing property`}, 4},
		{"misspelt step key", "name: x\nsteps:\n  - id: a\n    run: {argv: [true]}\n    asert: [true]\n",
			[]string{`Property asert is not allowed.`}, []string{`Missing property`}, 5},
		{"misspelt spec key", "name: x\nsteps:\n  - id: a\n    run: {agrv: [true]}\n",
			[]string{`Property agrv is not allowed.`, `Missing property "argv"`}, nil, 4},
		{"misspelt top key", "name: x\nstpes: []\nsteps:\n  - id: a\n    run: {argv: [true]}\n",
			[]string{`Property stpes is not allowed.`}, nil, 2},
		{"wrong type", "name: x\nsteps:\n  - id: a\n    run: {argv: [true]}\n    retries: many\n",
			[]string{`Incorrect type. Expected "integer".`}, nil, 5},
		{"no action", "name: x\nsteps:\n  - id: a\n    name: nothing to do\n",
			[]string{`a step needs one action key`}, []string{`Missing property "apply"`}, 3},
		{"two actions", "name: x\nsteps:\n  - id: a\n    run: {argv: [true]}\n    sleep: {duration: 1s}\n",
			[]string{`one action per step: this step's action is run`, `one action per step: this step's action is sleep`}, nil, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := doc(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.text)
			all := messages(ds)
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no diagnostic says %q; got:\n%s", w, all)
				}
			}
			for _, r := range tc.refuse {
				if strings.Contains(all, r) {
					t.Errorf("a diagnostic says %q; got:\n%s", r, all)
				}
			}
			found := false
			for _, d := range ds {
				found = found || d.Range.Start.Line+1 == tc.line+1 // +1: the modeline
			}
			if !found {
				t.Errorf("no diagnostic on line %d; got:\n%s", tc.line, all)
			}
		})
	}

	t.Run("completion", func(t *testing.T) {
		// a step's keys, an action's spec keys, and top-level keys
		p, _ := doc("complete.yaml", "name: x\nsteps:\n  - id: a\n    \n  - id: b\n    run:\n      \n")
		for _, tc := range []struct {
			line, char int
			want       []string
		}{
			{4, 4, []string{"run", "apply", "wait", "until", "assert"}},
			{7, 6, []string{"argv", "via", "mutates"}},
		} {
			got := c.complete(p, tc.line, tc.char)
			for _, w := range tc.want {
				if !contains(got, w) {
					t.Errorf("completion at %d:%d lacks %q; got %v", tc.line+1, tc.char+1, w, got)
				}
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
