package helmrelease

import (
	"fmt"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	ci "helm.sh/helm/v4/pkg/chart"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli"
)

// charts loads each chart once per run: a chart as large as Cilium's
// (about 150 templates and a values schema) takes tens of milliseconds
// to read, which the helm command pays on every upgrade.
type charts struct {
	settings *cli.EnvSettings
	mu       sync.Mutex
	loaded   map[chartKey]*chartv2.Chart
}

type chartKey struct{ name, version string }

func newCharts(settings *cli.EnvSettings) *charts {
	return &charts{settings: settings, loaded: map[chartKey]*chartv2.Chart{}}
}

// load returns the chart name (a path, or repo/name as helm's
// repositories know it) at version ("" for a local chart's own or a
// repository's newest), loading it on first use.
func (c *charts) load(name, version string) (*chartv2.Chart, error) {
	key := chartKey{name, version}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.loaded[key]; ok {
		return fresh(ch), nil
	}
	// LocateChart takes a path that exists as the chart, as the helm
	// command does, and else looks name up in the repositories of
	// Helm's own configuration ($HELM_REPOSITORY_CONFIG and its cache).
	opts := action.ChartPathOptions{Version: version}
	path, err := opts.LocateChart(name, c.settings)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", path, err)
	}
	// As the helm command: a chart whose dependencies are not in its
	// charts/ directory is refused, not rendered without them.
	ac, err := ci.NewAccessor(ch)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", path, err)
	}
	if req := ac.MetaDependencies(); len(req) > 0 {
		if err := action.CheckDependencies(ch, req); err != nil {
			return nil, fmt.Errorf("chart %s: %w (helm dependency build fetches them)", path, err)
		}
	}
	c.loaded[key] = ch
	return fresh(ch), nil
}

// fresh is a copy of a loaded chart for one upgrade to use. Helm's
// upgrade writes into the chart it is given: reuseValues replaces its
// Values with the release's old ones, and a dependency whose condition is
// false is removed from it. The helm command loads the chart anew each
// time; here the next step that upgrades with the same chart must not
// inherit that, so each gets its own Values, metadata and dependencies.
// The templates and files are shared: nothing writes them.
func fresh(c *chartv2.Chart) *chartv2.Chart {
	cp := *c
	cp.Values = deepCopy(c.Values)
	if c.Metadata != nil {
		md := *c.Metadata
		md.Dependencies = make([]*chartv2.Dependency, len(c.Metadata.Dependencies))
		for i, d := range c.Metadata.Dependencies {
			dep := *d
			md.Dependencies[i] = &dep
		}
		cp.Metadata = &md
	}
	deps := make([]*chartv2.Chart, 0, len(c.Dependencies()))
	for _, d := range c.Dependencies() {
		deps = append(deps, fresh(d))
	}
	cp.SetDependencies(deps...)
	return &cp
}
