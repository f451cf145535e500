package helmrelease

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/strvals"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// upgrade is `helm upgrade` (with --install, `helm install` when the
// release does not exist yet): the chart loaded once per run, the values
// merged as the helm command merges -f and --set. It does not wait for
// the chart's objects to be ready (helm's default, hookOnly): a lab waits
// for what it needs with its own steps, which show their progress.
func (c *Client) upgrade(ctx context.Context, cfg *action.Configuration, ns string, req cluster.HelmRequest, missing bool) error {
	up := req.Upgrade
	ch, err := c.charts.load(up.Chart, up.Version)
	if err != nil {
		return err
	}
	vals, err := values(up)
	if err != nil {
		return err
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	if missing {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace, in.Timeout = req.Release, ns, timeout
		in.WaitStrategy = helmkube.HookOnlyStrategy
		in.DisableOpenAPIValidation = serverValidates
		_, err = in.RunWithContext(ctx, ch, vals)
		return err
	}
	u := action.NewUpgrade(cfg)
	u.Namespace, u.Timeout, u.MaxHistory = ns, timeout, c.settings.MaxHistory
	u.WaitStrategy = helmkube.HookOnlyStrategy
	u.DisableOpenAPIValidation = serverValidates
	u.ReuseValues, u.ResetValues = up.ReuseValues, up.ResetValues
	_, err = u.RunWithContext(ctx, req.Release, ch, vals)
	return err
}

// serverValidates: an upgrade or install leaves the validation of the
// chart's objects to the API server. Helm applies them with
// fieldValidation=Strict whatever this flag says, so the server refuses
// an unknown or duplicate field as it would; what the flag turns off is
// Helm's pass before that, which on a server that validates (every
// Kubernetes since 1.27) only asks whether it does, by fetching and
// parsing the OpenAPI schema of each group version the chart uses, again
// on every upgrade: a fifth of the CPU of an upgrade of Cilium's chart.
const serverValidates = true

// defaultTimeout is the helm command's --timeout.
const defaultTimeout = 5 * time.Minute

// values merges an upgrade's values and its set items as the helm
// command merges -f and --set: the values first, each item over them.
func values(up *cluster.HelmUpgrade) (map[string]any, error) {
	// A copy: set items write into nested maps, which are the spec's.
	vals := deepCopy(up.Values)
	for _, s := range up.Set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("set %q: %w", s, err)
		}
	}
	return vals, nil
}

// rollback is `helm rollback`. Helm's rollback takes no context, so an
// interrupted run stops waiting for it and says so; Helm finishes the
// rollback's requests (a release left half rolled back would be worse).
func (c *Client) rollback(ctx context.Context, cfg *action.Configuration, req cluster.HelmRequest) error {
	rb := action.NewRollback(cfg)
	// MaxHistory as the helm command's --history-max: without it, Helm
	// keeps every revision a rollback makes.
	rb.Version, rb.Timeout, rb.MaxHistory = req.Rollback.Revision, req.Timeout, c.settings.MaxHistory
	if rb.Timeout == 0 {
		rb.Timeout = defaultTimeout
	}
	rb.WaitStrategy = helmkube.HookOnlyStrategy
	done := make(chan error, 1)
	go func() { done <- rb.Run(req.Release) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("interrupted while Helm rolls the release back (Helm finishes its requests): %w", ctx.Err())
	}
}

// deepCopy copies the maps and lists of a values tree.
func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopy(x)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = copyValue(item)
		}
		return out
	}
	return v
}
