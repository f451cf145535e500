// Package helmrelease implements cluster.Releases with Helm's action
// package, on a cluster connection package kube makes: what `helm get
// values`, `helm history`, `helm upgrade` and `helm rollback` do, without
// a helm command. labrun-helm serves a run's helm steps with one Client,
// which keeps what a helm command would find again each time: the API's
// discovery, the charts it loaded (a chart is loaded once per run,
// however many steps upgrade with it) and the revisions it decoded.
package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/cli"
	helmkube "helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Connection is what a Client needs of the run's cluster connection (a
// *kube.Client): its configuration, its default namespace, and the way
// it reports a failed call (credentials scrubbed, the kind of failure
// marked), which Helm's calls on its configuration get too.
type Connection interface {
	Config() *rest.Config
	DefaultNamespace() string
	WrapError(err error, op, target string) error
}

// Client reads and changes Helm releases. It is safe for concurrent use;
// steps on one release run in the playbook's order anyway.
type Client struct {
	conn      Connection
	getter    *restGetter
	namespace string // the connection's default
	settings  *cli.EnvSettings

	meta metadata.Interface // Secrets' metadata, for the store

	mu      sync.Mutex
	configs map[string]*config // by namespace
	charts  *charts
}

// New makes a Client on conn's cluster.
func New(conn Connection) (*Client, error) {
	// The field manager of the helm command, not of this process's
	// name: a release installed or upgraded by helm owns its fields as
	// "helm", and server-side apply under another manager conflicts on
	// every field the chart sets.
	helmkube.ManagedFieldsManager = "helm"
	g, err := newRESTGetter(conn.Config(), conn.DefaultNamespace())
	if err != nil {
		return nil, err
	}
	// The helm command's settings from the environment: where its
	// repositories are, and HELM_MAX_HISTORY.
	settings := cli.New()
	meta, err := metadata.NewForConfig(conn.Config())
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, getter: g, meta: meta, namespace: conn.DefaultNamespace(), settings: settings, configs: map[string]*config{}, charts: newCharts(settings)}, nil
}

// Lazy makes the Client on its first call, from the connection connect
// returns, and returns the same one afterwards.
func Lazy(connect func() (Connection, error)) func() (cluster.Releases, error) {
	return sync.OnceValues(func() (cluster.Releases, error) {
		conn, err := connect()
		if err != nil {
			return nil, err
		}
		c, err := New(conn)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return c, nil
	})
}

// config is Helm's configuration for releases in one namespace, and
// the storage of its releases in it.
type config struct {
	*action.Configuration
	store *store
}

// config is Helm's configuration for releases in ns: its Kubernetes
// client and its storage of releases (Secrets, as the helm command's
// default driver, through store).
func (c *Client) config(ns string) (*config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg, ok := c.configs[ns]; ok {
		return cfg, nil
	}
	// Helm logs what it does at debug level; the step's result and
	// error say what a lab needs.
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(c.getter.inNamespace(ns), ns, "secret"); err != nil {
		return nil, err
	}
	if kc, ok := cfg.KubeClient.(*helmkube.Client); ok {
		kc.Namespace = ns
	}
	secrets, ok := cfg.Releases.Driver.(*driver.Secrets)
	if !ok {
		return nil, fmt.Errorf("helm: storage driver %T, not Secrets", cfg.Releases.Driver)
	}
	st := newStore(secrets, c.meta.Resource(secretsResource).Namespace(ns))
	cfg.Releases.Driver = st
	c.configs[ns] = &config{Configuration: cfg, store: st}
	return c.configs[ns], nil
}

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Release implements cluster.Releases: the release as it is, then the
// change req asks for, then the release after it.
func (c *Client) Release(ctx context.Context, req cluster.HelmRequest) (*cluster.HelmRelease, error) {
	ns := req.Namespace
	if ns == "" {
		ns = c.namespace
	}
	target := fmt.Sprintf("release %q in namespace %q", req.Release, ns)
	cfg, err := c.config(ns)
	if err != nil {
		return nil, c.conn.WrapError(err, "reach Helm releases", target)
	}
	before, err := c.current(ctx, cfg, req.Release)
	install := req.Upgrade != nil && req.Upgrade.Install
	if err != nil && !(install && errors.Is(err, errNoRelease)) {
		return nil, c.conn.WrapError(err, "read Helm", target)
	}
	switch {
	case req.Upgrade != nil:
		err = c.upgrade(ctx, cfg.Configuration, ns, req, before == nil)
	case req.Rollback != nil:
		err = c.rollback(ctx, cfg.Configuration, req)
	default:
		return describe(before.release, before.release, before.history), nil
	}
	if err != nil {
		return nil, c.changeError(err, target, req)
	}
	after, err := c.current(ctx, cfg, req.Release)
	if err != nil {
		return nil, c.conn.WrapError(err, "read Helm after the change", target)
	}
	var prev *release.Release
	if before != nil {
		prev = before.release
	}
	return describe(prev, after.release, after.history), nil
}

// state is a release as a step finds it: its newest revision, decoded,
// and the list of its revisions.
type state struct {
	release *release.Release
	history []cluster.HelmRevision
}

// current lists the release's revisions and decodes the newest, which
// is the release (nil and errNoRelease when it has none): one list of
// their Secrets' metadata, and the newest decoded unless the store has
// it at the version listed.
func (c *Client) current(ctx context.Context, cfg *config, name string) (*state, error) {
	items, err := cfg.store.list(ctx, map[string]string{"owner": "helm", "name": name})
	if err != nil {
		return nil, err
	}
	revs, newest, err := revisions(items)
	if err != nil {
		return nil, err
	}
	rel, err := cfg.store.revision(newest.Name, newest.ResourceVersion)
	if err != nil {
		return nil, err
	}
	return &state{release: rel, history: revs}, nil
}

// changeError is the error of an upgrade or rollback Helm could not
// make: the connection's (the cluster did not answer, or refused
// labrun), a timeout, or else a *cluster.HelmChangeError, the lab's
// chart and values not making a release on this cluster.
func (c *Client) changeError(err error, target string, req cluster.HelmRequest) error {
	op := "helm upgrade"
	if req.Rollback != nil {
		op = "helm rollback"
	}
	wrapped := c.conn.WrapError(err, op, target)
	var te *cluster.TransientError
	var fe *cluster.ForbiddenError
	switch {
	case errors.As(wrapped, &te), errors.As(wrapped, &fe):
		return wrapped
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), wait.Interrupted(err):
		return wrapped
	}
	return &cluster.HelmChangeError{Err: wrapped}
}
