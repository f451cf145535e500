package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// secretToken is the credential the kubeconfig tests use; no error may
// ever contain it.
const secretToken = "s3cr3t-t0ken-value-never-print-me"

// writeKubeconfig writes a kubeconfig with one cluster/user/context per
// name, all pointing at server. current may be empty.
func writeKubeconfig(t *testing.T, path, server, current string, contexts ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: %s\n    insecure-skip-tls-verify: true\n", c, server)
	}
	b.WriteString("users:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  user:\n    token: %s\n", c, secretToken)
	}
	b.WriteString("contexts:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: %s\n    user: %s\n    namespace: ns-%s\n", c, c, c, c)
	}
	if current != "" {
		fmt.Fprintf(&b, "current-context: %s\n", current)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConnectPrecedence(t *testing.T) {
	dir := t.TempDir()
	flagFile := filepath.Join(dir, "flag.yaml")
	envA := filepath.Join(dir, "env-a.yaml")
	envB := filepath.Join(dir, "env-b.yaml")
	home := filepath.Join(dir, "home")
	homeFile := filepath.Join(home, ".kube", "config")
	k3sFile := filepath.Join(dir, "k3s.yaml")
	writeKubeconfig(t, flagFile, "https://flag.example:6443", "flag", "flag")
	writeKubeconfig(t, envA, "https://env-a.example:6443", "", "a")
	writeKubeconfig(t, envB, "https://env-b.example:6443", "b", "b")
	writeKubeconfig(t, homeFile, "https://home.example:6443", "home", "home")
	writeKubeconfig(t, k3sFile, "https://k3s.example:6443", "default", "default")

	tests := []struct {
		name      string
		flag      string
		context   string
		env       string
		home      string
		k3s       string
		wantHost  string
		wantCtx   string
		wantNS    string
		wantSrc   string
		wantError []string
	}{
		{name: "flag wins over everything", flag: flagFile, env: envB, home: home, k3s: k3sFile,
			wantHost: "https://flag.example:6443", wantCtx: "flag", wantNS: "ns-flag", wantSrc: "--kubeconfig"},
		{name: "KUBECONFIG list merged, current-context from second file", env: envA + string(os.PathListSeparator) + envB, home: home, k3s: k3sFile,
			wantHost: "https://env-b.example:6443", wantCtx: "b", wantSrc: "KUBECONFIG="},
		{name: "context selects within KUBECONFIG", env: envA + string(os.PathListSeparator) + envB, context: "a", home: home, k3s: k3sFile,
			wantHost: "https://env-a.example:6443", wantCtx: "a", wantNS: "ns-a"},
		{name: "home config before k3s", home: home, k3s: k3sFile,
			wantHost: "https://home.example:6443", wantCtx: "home", wantSrc: "~/.kube/config"},
		{name: "k3s as the last default", home: filepath.Join(dir, "nohome"), k3s: k3sFile,
			wantHost: "https://k3s.example:6443", wantCtx: "default", wantSrc: "k3s default"},
		{name: "missing context in home falls through to k3s", home: home, context: "default", k3s: k3sFile,
			wantHost: "https://k3s.example:6443", wantCtx: "default"},
		{name: "explicit flag does not fall back", flag: filepath.Join(dir, "missing.yaml"), home: home, k3s: k3sFile,
			wantError: []string{"missing.yaml (--kubeconfig): ", "does not exist"}},
		{name: "explicit KUBECONFIG does not fall back", env: filepath.Join(dir, "missing.yaml"), home: home, k3s: k3sFile,
			wantError: []string{"KUBECONFIG=", "missing.yaml: file does not exist"}},
		{name: "unknown context is named with the available ones", flag: flagFile, context: "nope",
			wantError: []string{`context "nope" not found (contexts: flag)`}},
		{name: "nothing found lists every place and why", home: filepath.Join(dir, "nohome"), k3s: filepath.Join(dir, "nok3s.yaml"),
			wantError: []string{"looked at:", filepath.Join(dir, "nohome", ".kube", "config") + " (~/.kube/config): " + filepath.Join(dir, "nohome", ".kube", "config") + ": file does not exist", "nok3s.yaml (k3s default): ", "nok3s.yaml: file does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Connect(ConnectOptions{
				Kubeconfig: tt.flag, Context: tt.context,
				env: envFunc(map[string]string{"KUBECONFIG": tt.env}), home: tt.home, k3s: tt.k3s,
			})
			if tt.wantError != nil {
				if err == nil {
					t.Fatalf("Connect succeeded (%s), want error", c)
				}
				for _, w := range tt.wantError {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), secretToken) {
					t.Errorf("error leaks the token: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if c.Host != tt.wantHost || c.Context != tt.wantCtx {
				t.Errorf("got host %s context %s, want %s %s", c.Host, c.Context, tt.wantHost, tt.wantCtx)
			}
			if tt.wantNS != "" && c.Namespace != tt.wantNS {
				t.Errorf("namespace %q, want %q", c.Namespace, tt.wantNS)
			}
			if tt.wantSrc != "" && !strings.Contains(c.Source, tt.wantSrc) {
				t.Errorf("source %q does not mention %q", c.Source, tt.wantSrc)
			}
			if c.config.QPS != DefaultQPS || c.config.Burst != DefaultBurst {
				t.Errorf("QPS/Burst %v/%v, want %v/%v", c.config.QPS, c.config.Burst, DefaultQPS, DefaultBurst)
			}
			for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%#v", c)} {
				if strings.Contains(s, secretToken) {
					t.Errorf("printing the client leaks the token: %q", s)
				}
			}
		})
	}
}

func TestConnectMalformedKubeconfigDoesNotLeakSecrets(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	// A user with a token and a client key, a context pointing at a cluster
	// that does not exist, plus invalid base64 CA data.
	content := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://x.example:6443
    certificate-authority-data: "!!notbase64 ` + secretToken + `"
users:
- name: u
  user:
    token: ` + secretToken + `
    client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDQktjd2dnU2pBZ0VBQW9JQkFRQzdWSlRVdDlVczhjS2oKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo=
contexts:
- name: ctx
  context:
    cluster: c
    user: u
current-context: ctx
`
	if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(ConnectOptions{Kubeconfig: bad, env: envFunc(nil)})
	if err == nil {
		t.Fatal("Connect succeeded with a malformed kubeconfig")
	}
	msg := err.Error()
	for _, leak := range []string{secretToken, "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS", "BEGIN PRIVATE KEY"} {
		if strings.Contains(msg, leak) {
			t.Errorf("error leaks %q: %s", leak, msg)
		}
	}
	if !strings.Contains(msg, "bad.yaml") {
		t.Errorf("error does not name the file: %s", msg)
	}
}

func TestConnectNoContexts(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(ConnectOptions{Kubeconfig: empty, env: envFunc(nil)})
	if err == nil || !strings.Contains(err.Error(), "no contexts defined") {
		t.Fatalf("got %v, want an error saying there are no contexts", err)
	}
}

// In a pod with no kubeconfig, labrun connects as the pod's service
// account (rest.InClusterConfig, replaced here: it reads fixed paths), in
// the namespace mounted beside the token; a kubeconfig of the user's
// still wins, an explicit one never falls back to it, and outside a pod
// it is named among the places looked at.
func TestConnectInCluster(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	sa := filepath.Join(dir, "serviceaccount")
	if err := os.MkdirAll(sa, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sa, "namespace"), []byte("student-07"), 0o644); err != nil {
		t.Fatal(err)
	}
	inCluster := func() (*rest.Config, error) {
		return &rest.Config{Host: "https://10.43.0.1:443", BearerToken: secretToken}, nil
	}
	inPod := envFunc(map[string]string{"KUBERNETES_SERVICE_HOST": "10.43.0.1"})
	connect := func(flag string, env func(string) string) (*Client, error) {
		return Connect(ConnectOptions{Kubeconfig: flag, env: env, home: home, k3s: filepath.Join(dir, "nok3s.yaml"),
			inCluster: inCluster, serviceAccountDir: sa})
	}

	c, err := connect("", inPod)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "https://10.43.0.1:443" || c.Namespace != "student-07" || !strings.Contains(c.Source, "in-cluster") {
		t.Errorf("in a pod: host %s, namespace %s, source %s; want the service account's", c.Host, c.Namespace, c.Source)
	}
	if strings.Contains(fmt.Sprintf("%#v %s", c, c), secretToken) {
		t.Error("printing the in-cluster client leaks the token")
	}

	if _, err := connect(filepath.Join(dir, "missing.yaml"), inPod); err == nil || strings.Contains(err.Error(), "in-cluster") {
		t.Errorf("an explicit kubeconfig fell back to the service account: %v", err)
	}
	_, err = connect("", envFunc(nil))
	if err == nil || !strings.Contains(err.Error(), "in-cluster (the pod's service account): not in a pod (KUBERNETES_SERVICE_HOST is not set)") {
		t.Errorf("outside a pod: %v; want the in-cluster place named with why", err)
	}

	writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "https://home.example:6443", "home", "home")
	if c, err := connect("", inPod); err != nil || c.Host != "https://home.example:6443" {
		t.Errorf("with ~/.kube/config in a pod: %v, %v; want ~/.kube/config to win", c, err)
	}
}
