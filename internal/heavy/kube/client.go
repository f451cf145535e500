package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// K3sKubeconfig is where k3s writes its admin kubeconfig. labrun looks there
// last so that a lab on a fresh k3s host works without any flag.
const K3sKubeconfig = "/etc/rancher/k3s/k3s.yaml"

// FieldManager is the server-side apply field manager labrun uses, so that
// ownership of fields set by labs is visible in managedFields.
const FieldManager = "labrun"

// Default client-side rate limits. client-go's defaults (5 QPS, burst 10)
// would make a lab that applies a few dozen objects or resolves many pods
// wait on the client for no reason; the API server protects itself with
// priority and fairness anyway. These values are never reached by a normal
// lab but still bound a runaway loop.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// ConnectOptions select the kubeconfig and context. The zero value follows
// the usual precedence (see Connect).
type ConnectOptions struct {
	// Kubeconfig is an explicit kubeconfig path (the --kubeconfig flag).
	Kubeconfig string `json:"kubeconfig"`
	// Context selects a context of the kubeconfig (the --context flag);
	// empty means the kubeconfig's current-context.
	Context string `json:"context"`
	// QPS and Burst override DefaultQPS and DefaultBurst when positive.
	QPS   float32 `json:"qps"`
	Burst int     `json:"burst"`
	// UserAgent is sent with every request; empty means "labrun".
	UserAgent string `json:"userAgent"`
	// Warnings is where the API server's warnings are written (nil:
	// os.Stderr); labrun's escapes the control characters a warning's
	// text may hold.
	Warnings io.Writer `json:"-"`

	// env, home and k3s replace the process environment and the k3s path
	// in tests; inCluster and serviceAccountDir replace
	// rest.InClusterConfig and where it reads the pod's service account.
	env               func(string) string
	home              string
	k3s               string
	inCluster         func() (*rest.Config, error)
	serviceAccountDir string
}

// ServiceAccountDir is where Kubernetes mounts a pod's service account:
// its token, the cluster's CA and its namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Client is a connection to one cluster. It is safe for concurrent use and
// meant to live for a whole lab run: it holds the HTTP/2 transport, the
// discovery cache and the RESTMapper that every call reuses.
type Client struct {
	// Source tells where the configuration came from, e.g.
	// `/root/.kube/config (~/.kube/config)`; for messages and logs.
	Source string
	// Context is the kubeconfig context in use.
	Context string
	// Host is the API server URL.
	Host string
	// Namespace is the context's namespace ("default" when unset); used for
	// namespaced objects that do not name one.
	Namespace string

	config  *rest.Config // base config; never printed (see Redact)
	builtin *builtinClient
	dynamic dynamic.Interface
	mapper  *restMapper
	secrets *secretSet // credential values to scrub from errors

	// The exec WebSocket dialer, built on first exec (see wsDialer).
	wsOnce sync.Once
	ws     *wsDialer
	wsErr  error

	sessionsMu sync.Mutex
	sessions   map[sessionKey]*sessionSlot
}

// Client is the cluster the actions use.
var _ cluster.Cluster = (*Client)(nil)

// String describes the connection without any credential.
func (c *Client) String() string {
	return fmt.Sprintf("context %q on %s (from %s)", c.Context, c.Host, c.Source)
}

// Config returns a copy of the client's rest.Config for callers that need a
// client-go API this package does not wrap. Never print it with %#v.
func (c *Client) Config() *rest.Config { return rest.CopyConfig(c.config) }

// Dynamic returns the dynamic client (JSON on the wire).
func (c *Client) Dynamic() dynamic.Interface { return c.dynamic }

// ServerVersion asks the API server for its version. It is the cheapest way
// to check that the cluster answers and that the credentials work.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	res := c.builtin.core().Get().AbsPath("/version").Do(ctx)
	if err := res.Error(); err != nil {
		return "", c.wrap(err, "get", "server version at "+c.Host)
	}
	body, _ := res.Raw()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("decode server version: %w", err)
	}
	return v.GitVersion, nil
}

// Connect builds a Client from a kubeconfig. It does not contact the server
// (use ServerVersion for that), so it is cheap and its errors are only about
// configuration.
//
// Where the kubeconfig comes from, first match wins:
//
//  1. opts.Kubeconfig (the --kubeconfig flag);
//  2. the KUBECONFIG environment variable, a list of files merged the way
//     kubectl merges them;
//  3. ~/.kube/config;
//  4. in a pod (KUBERNETES_SERVICE_HOST set, a service account mounted):
//     the pod's service account, with rest.InClusterConfig, in its
//     namespace;
//  5. /etc/rancher/k3s/k3s.yaml (k3s's admin kubeconfig).
//
// An explicit flag or KUBECONFIG is a deliberate choice: if it does not work
// Connect fails instead of silently falling back to another cluster. The two
// defaults are tried in turn. When nothing works the error names every place
// looked at and why each one failed.
func Connect(opts ConnectOptions) (*Client, error) {
	getenv := opts.env
	if getenv == nil {
		getenv = os.Getenv
	}
	home := opts.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}

	var tried []string
	k3s := opts.k3s
	if k3s == "" {
		k3s = K3sKubeconfig
	}
	for _, src := range kubeconfigSources(opts.Kubeconfig, getenv("KUBECONFIG"), home, k3s) {
		var c *Client
		var err error
		if src.inCluster {
			c, err = connectInCluster(src, opts, getenv)
		} else {
			c, err = connectSource(src, opts)
		}
		if err == nil {
			return c, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", src.label, err))
		if src.explicit {
			break
		}
	}
	return nil, &ConfigError{Tried: tried}
}

// Lazy returns a function that connects with opts on its first call and
// returns the same connection (or error) afterwards, so a playbook without
// Kubernetes steps never looks for a kubeconfig.
func Lazy(opts ConnectOptions) func() (cluster.Cluster, error) {
	return sync.OnceValues(func() (cluster.Cluster, error) {
		c, err := Connect(opts)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return c, nil
	})
}

// ConfigError says that no usable kubeconfig was found; Tried lists each
// place looked at with the reason it failed.
type ConfigError struct {
	Tried []string `json:"tried"`
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("no usable kubeconfig; looked at:")
	for _, t := range e.Tried {
		b.WriteString("\n  - ")
		b.WriteString(t)
	}
	return b.String()
}

// kubeconfigSource is one place Connect may take its configuration from.
type kubeconfigSource struct {
	label    string   // how the place is named in messages
	files    []string // merged in order, as kubectl merges KUBECONFIG
	explicit bool     // chosen by the user: no fallback past it
	// inCluster: the pod's service account, not a kubeconfig file.
	inCluster bool
}

// kubeconfigSources lists the places to look, in precedence order.
func kubeconfigSources(flag, env, home, k3s string) []kubeconfigSource {
	if flag != "" {
		p := expandHome(flag, home)
		return []kubeconfigSource{{label: p + " (--kubeconfig)", files: []string{p}, explicit: true}}
	}
	if env != "" {
		var files []string
		for _, f := range filepath.SplitList(env) {
			if f != "" {
				files = append(files, expandHome(f, home))
			}
		}
		return []kubeconfigSource{{label: "KUBECONFIG=" + env, files: files, explicit: true}}
	}
	var srcs []kubeconfigSource
	if home != "" {
		p := filepath.Join(home, ".kube", "config")
		srcs = append(srcs, kubeconfigSource{label: p + " (~/.kube/config)", files: []string{p}})
	} else {
		srcs = append(srcs, kubeconfigSource{label: "~/.kube/config (no home directory)"})
	}
	srcs = append(srcs, kubeconfigSource{label: "in-cluster (the pod's service account)", inCluster: true})
	srcs = append(srcs, kubeconfigSource{label: k3s + " (k3s default)", files: []string{k3s}})
	return srcs
}

// connectInCluster builds a Client from the service account Kubernetes
// mounts into a pod (rest.InClusterConfig: the API server from
// KUBERNETES_SERVICE_HOST and _PORT, the token, re-read as it rotates,
// and the cluster's CA), in the pod's own namespace.
func connectInCluster(src kubeconfigSource, opts ConnectOptions, getenv func(string) string) (*Client, error) {
	if getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, errors.New("not in a pod (KUBERNETES_SERVICE_HOST is not set)")
	}
	load, dir := opts.inCluster, opts.serviceAccountDir
	if load == nil {
		load = rest.InClusterConfig
	}
	if dir == "" {
		dir = ServiceAccountDir
	}
	config, err := load()
	if err != nil {
		return nil, errors.New(Redact(err.Error()))
	}
	ns := "default"
	if b, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil && strings.TrimSpace(string(b)) != "" {
		ns = strings.TrimSpace(string(b))
	}
	c, err := newClient(config, opts, []string{config.BearerToken})
	if err != nil {
		return nil, errors.New(redactWith(err.Error(), []string{config.BearerToken}))
	}
	c.Source, c.Context, c.Namespace = src.label, "in-cluster", ns
	return c, nil
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// connectSource loads one source and builds a Client from it.
func connectSource(src kubeconfigSource, opts ConnectOptions) (*Client, error) {
	if len(src.files) == 0 {
		return nil, errors.New("nothing to read")
	}
	// Read each file first so that the error says precisely which file is
	// missing, unreadable or malformed; clientcmd would skip missing files
	// silently.
	var readable, problems []string
	var secrets []string
	for _, f := range src.files {
		cfg, err := clientcmd.LoadFromFile(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, f+": file does not exist")
		case errors.Is(err, fs.ErrPermission):
			problems = append(problems, f+": permission denied (run as a user who can read it, or copy it)")
		case err != nil:
			problems = append(problems, f+": "+Redact(err.Error()))
		default:
			readable = append(readable, f)
			secrets = append(secrets, configSecrets(cfg)...)
		}
	}
	if len(readable) == 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}

	rules := &clientcmd.ClientConfigLoadingRules{Precedence: readable}
	merged, err := rules.Load()
	if err != nil {
		return nil, errors.New(redactWith(err.Error(), secrets))
	}
	if len(merged.Contexts) == 0 {
		return nil, errors.New("no contexts defined")
	}
	ctxName := opts.Context
	if ctxName == "" {
		ctxName = merged.CurrentContext
	}
	if ctxName == "" {
		return nil, fmt.Errorf("no current-context set and no --context given (contexts: %s)", contextNames(merged))
	}
	if _, ok := merged.Contexts[ctxName]; !ok {
		return nil, fmt.Errorf("context %q not found (contexts: %s)", ctxName, contextNames(merged))
	}
	cc := clientcmd.NewNonInteractiveClientConfig(*merged, ctxName, &clientcmd.ConfigOverrides{}, rules)
	config, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q: %s", ctxName, redactWith(err.Error(), secrets))
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	c, err := newClient(config, opts, secrets)
	if err != nil {
		return nil, fmt.Errorf("context %q: %s", ctxName, redactWith(err.Error(), secrets))
	}
	c.Source = src.label
	c.Context = ctxName
	c.Namespace = ns
	if len(problems) > 0 {
		// Some files of a KUBECONFIG list were unusable; kubectl ignores
		// them too, so this is not an error, but say so in Source.
		c.Source += " (skipped: " + strings.Join(problems, "; ") + ")"
	}
	return c, nil
}

func contextNames(cfg *clientcmdapi.Config) string {
	var names []string
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// configSecrets returns the credential values of a kubeconfig so that they
// can be scrubbed from any error text that might echo them.
func configSecrets(cfg *clientcmdapi.Config) []string {
	var s []string
	for _, a := range cfg.AuthInfos {
		s = append(s, a.Token, a.Password, string(a.ClientKeyData), string(a.ClientCertificateData))
		if a.AuthProvider != nil {
			for _, v := range a.AuthProvider.Config {
				s = append(s, v)
			}
		}
	}
	return s
}

// NewFromConfig builds a Client from an existing rest.Config (for example
// one built in a test). The config is copied; labrun's QPS, Burst and user
// agent are applied unless set in opts.
func NewFromConfig(config *rest.Config, opts ConnectOptions) (*Client, error) {
	secrets := []string{config.BearerToken, config.Password, string(config.KeyData), string(config.CertData)}
	c, err := newClient(config, opts, secrets)
	if err != nil {
		return nil, err
	}
	c.Source = "rest config"
	c.Namespace = "default"
	return c, nil
}

func newClient(in *rest.Config, opts ConnectOptions, secrets []string) (*Client, error) {
	config := rest.CopyConfig(in)
	config.QPS = DefaultQPS
	if opts.QPS > 0 {
		config.QPS = opts.QPS
	}
	config.Burst = DefaultBurst
	if opts.Burst > 0 {
		config.Burst = opts.Burst
	}
	// One budget for the whole client, shared by its REST clients (core,
	// apps, batch, dynamic), as client-go's clientset shares one.
	config.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(config.QPS, config.Burst)
	config.UserAgent = "labrun"
	if opts.UserAgent != "" {
		config.UserAgent = opts.UserAgent
	}
	// A warning such as a deprecated API version is worth showing once,
	// not once per request.
	warnings := opts.Warnings
	if warnings == nil {
		warnings = os.Stderr
	}
	config.WarningHandler = rest.NewWarningWriter(warnings, rest.WarningWriterOptions{Deduplicate: true})

	// One HTTP client, so one connection (HTTP/2) for every request.
	hc, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	// Built-in types travel as protobuf (see builtinClient). The dynamic
	// client handles any kind, including custom resources, which have no
	// protobuf form.
	builtin, err := newBuiltinClient(config, hc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(config, hc)
	if err != nil {
		return nil, err
	}
	c := &Client{
		Host:    config.Host,
		config:  config,
		builtin: builtin,
		dynamic: dyn,
		mapper:  newRESTMapper(discoverer(builtin.core())),
		secrets: &secretSet{values: nonEmpty(secrets)},
	}
	return c, nil
}

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
