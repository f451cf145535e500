package actions

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// HelmSpec reads a Helm release, or upgrades or rolls it back and reads
// it after, through Helm's own library on labrun's cluster connection:
// no helm process, and a chart is loaded once per run however many steps
// upgrade with it.
type HelmSpec struct {
	Release   string                `yaml:"release" required:"true" doc:"The release's name."`
	Namespace string                `yaml:"namespace" doc:"The release's namespace (default: the kubeconfig context's)."`
	Upgrade   *cluster.HelmUpgrade  `yaml:"upgrade" doc:"Upgrade the release (helm upgrade); the step then changes the system and check skips it."`
	Rollback  *cluster.HelmRollback `yaml:"rollback" doc:"Roll the release back to a revision (helm rollback); the step then changes the system and check skips it."`
	Timeout   time.Duration         `yaml:"timeout" doc:"Time limit of an upgrade or rollback, its hooks included (helm's --timeout; default 5m)."`
}

func init() {
	Register(Def[HelmSpec, cluster.HelmRelease]{
		Name: "helm",
		// Reading a release is one list of its Secrets; an upgrade is a
		// request per object, which the steps after it wait on anyway.
		Cost:         RoundTrip,
		Doc:          "Read a Helm release (revision, status, chart, values, history), or upgrade it or roll it back first; the result lists the values that changed.",
		Changes:      "the cluster: a Helm release and the objects of its chart",
		MutatingKeys: []string{"upgrade", "rollback"},
		Run:          runHelm,
		Check:        checkHelm,
		Access: func(spec *HelmSpec, ac *AccessContext) ([]cluster.Access, error) {
			if spec.Upgrade != nil || spec.Rollback != nil || ac.Spec.Lookup("upgrade") != nil || ac.Spec.Lookup("rollback") != nil {
				return cluster.HelmChangeAccess(), nil
			}
			if err := ac.known("namespace"); err != nil {
				return nil, err
			}
			ns := spec.Namespace
			if ns == "" {
				ns = ac.Namespace
			}
			return cluster.HelmReadAccess(ns), nil
		},
	})
}

// checkHelm refuses a step that both upgrades and rolls back, and an
// upgrade whose value flags Helm would refuse together.
func checkHelm(spec *eval.Value, sc *StaticContext) diag.List {
	errs := atMostOne(spec, "upgrade", "rollback")
	if up := spec.Lookup("upgrade"); up != nil {
		errs = append(errs, atMostOne(up, "reuseValues", "resetValues")...)
		for _, item := range up.Lookup("set").Items() {
			lit, ok := item.Literal()
			if s, isString := lit.(string); ok && isString && !strings.Contains(s, "=") {
				errs.Add(item.Pos, "set item %q has no =; expected path=value, as helm's --set takes it", s)
			}
		}
	}
	return errs
}

// runHelm hands the request to the run's Helm client, taking a local
// chart's path from the playbook's directory as every input path is.
func runHelm(ctx context.Context, rt *Runtime, spec *HelmSpec) (*cluster.HelmRelease, error) {
	if rt.Releases == nil {
		return nil, &ConnectError{Err: errors.New("no Helm connection: labrun reaches Helm releases through its cluster connection, and this run has none")}
	}
	rel, err := rt.Releases()
	if err != nil {
		return nil, &ConnectError{Err: err}
	}
	req := cluster.HelmRequest{Release: spec.Release, Namespace: spec.Namespace, Rollback: spec.Rollback, Timeout: spec.Timeout}
	if spec.Upgrade != nil {
		up := *spec.Upgrade
		up.Chart = localChart(rt, up.Chart)
		req.Upgrade = &up
	}
	r, err := rel.Release(ctx, req)
	var ce *cluster.HelmConnectError
	if errors.As(err, &ce) {
		return nil, &ConnectError{Err: ce.Err}
	}
	return r, err
}

// localChart is chart as a path from the playbook's directory when a
// file or directory is there, as helm takes a chart that exists as a path
// before it looks in its repositories; else chart as written (repo/name,
// oci://...).
func localChart(rt *Runtime, chart string) string {
	if strings.Contains(chart, "://") {
		return chart
	}
	if p := rt.ResolveInput(chart); fileExists(p) {
		return p
	}
	return chart
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
