package kube

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDecodeFilesDirectory(t *testing.T) {
	ms, err := DecodeFiles(filepath.Join("testdata", "manifests", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind, name, file string
		doc, line        int
	}
	wants := []want{
		{"Namespace", "lab", "10-namespace.yml", 1, 1},
		{"Deployment", "web", "20-app.yaml", 1, 3},
		{"Service", "web", "20-app.yaml", 2, 21},
		{"ConfigMap", "cfg", "30-config.json", 1, 1},
		{"ConfigMap", "one", "40-list.yaml", 1, 1},
		{"ConfigMap", "two", "40-list.yaml", 1, 1},
	}
	if len(ms) != len(wants) {
		for _, m := range ms {
			t.Logf("%s %s/%s", m.Where(), m.Object.GetKind(), m.Object.GetName())
		}
		t.Fatalf("got %d manifests, want %d", len(ms), len(wants))
	}
	for i, w := range wants {
		m := ms[i]
		if m.Object.GetKind() != w.kind || m.Object.GetName() != w.name || filepath.Base(m.Source) != w.file || m.Document != w.doc || m.Line != w.line {
			t.Errorf("manifest %d: got %s %s from %s doc %d line %d, want %+v", i, m.Object.GetKind(), m.Object.GetName(), m.Source, m.Document, m.Line, w)
		}
	}
	// Integers must stay integers (int64), as the API machinery expects.
	if r, ok := ms[1].Object.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 2 {
		t.Errorf("spec.replicas = %#v, want int64 2", ms[1].Object.Object["spec"].(map[string]any)["replicas"])
	}
}

func TestDecodeFilesBadYAMLNamesFileAndDocument(t *testing.T) {
	_, err := DecodeFiles(filepath.Join("testdata", "manifests", "bad", "broken.yaml"))
	if err == nil {
		t.Fatal("no error for broken YAML")
	}
	for _, w := range []string{"broken.yaml", "document 2", "line 6", "invalid YAML"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestDecodeFilesErrors(t *testing.T) {
	if _, err := DecodeFiles(filepath.Join("testdata", "nope.yaml")); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := DecodeFiles(t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no *.yaml") {
		t.Errorf("empty directory: got %v", err)
	}
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		names   []string
		wantErr []string
	}{
		{name: "single document", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", names: []string{"a"}},
		{name: "json", text: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}`, names: []string{"j"}},
		{name: "empty documents and comments skipped",
			text:  "---\n\n---\n# nothing\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # trailing comment\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n",
			names: []string{"a", "b"}},
		{name: "separator-like line inside a block scalar is a separator only at column 0",
			text:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: |\n    ---not a separator\n",
			names: []string{"a"}},
		{name: "null document skipped", text: "~\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", names: []string{"a"}},
		{name: "whitespace only", text: "  \n\n", names: nil},
		{name: "missing fields", text: "apiVersion: v1\nmetadata: {}\n",
			wantErr: []string{"step 3 document 1 (line 1)", "missing kind, metadata.name"}},
		{name: "not an object", text: "- a\n- b\n", wantErr: []string{"step 3 document 1", "not an object"}},
		{name: "bad yaml in second document", text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n",
			wantErr: []string{"step 3 document 2 (line 5)", "invalid YAML"}},
		{name: "bad list item", text: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {}\n",
			wantErr: []string{"item 1", "missing metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := DecodeText("step 3", []byte(tt.text))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want %v", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range ms {
				names = append(names, m.Object.GetName())
			}
			if strings.Join(names, ",") != strings.Join(tt.names, ",") {
				t.Errorf("names %v, want %v", names, tt.names)
			}
		})
	}
}

// A FIFO among the manifests, named or in a directory, is refused without
// waiting on it (apply and labrun rbac hung there).
func TestDecodeFilesRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "00-fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	for _, p := range []string{fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := DecodeFiles(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "00-fifo.yaml is a named pipe (FIFO), not a regular file") {
				t.Errorf("DecodeFiles(%s): error %v, want one saying the FIFO is not a regular file", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("DecodeFiles(%s) still blocked after 5s", p)
		}
	}
}
