package cluster

import (
	"context"
	"time"
)

// Releases reads and changes Helm releases the way the helm command does,
// inside labrun: package helmrelease implements it with Helm's action
// package on the run's cluster connection, so that a lab's `helm upgrade`
// costs its requests, not a process that loads the chart, discovers the
// API and fetches its OpenAPI schema again.
type Releases interface {
	// Release reads the release req names and, when req asks for one,
	// upgrades it or rolls it back first. The result describes the
	// release afterwards, with what its values were before.
	Release(ctx context.Context, req HelmRequest) (*HelmRelease, error)
}

// HelmRequest names a release and what to do to it: nothing (read it),
// an upgrade, or a rollback.
type HelmRequest struct {
	Release   string
	Namespace string // "" is the connection's default namespace
	Upgrade   *HelmUpgrade
	Rollback  *HelmRollback
	// Timeout bounds an upgrade or rollback as helm's --timeout does
	// (Helm's hooks); 0 is Helm's default, 5 minutes.
	Timeout time.Duration
}

// HelmUpgrade is `helm upgrade RELEASE CHART` with its value flags.
type HelmUpgrade struct {
	Chart   string `yaml:"chart" json:"chart" required:"true" doc:"The chart: a directory or .tgz archive (relative to the playbook), or repo/name from Helm's repository config, as helm upgrade takes it."`
	Version string `yaml:"version" json:"version" doc:"Chart version constraint for a repository chart (helm's --version); a local chart's own version is used as is."`
	// Set and Values are merged as helm merges -f and --set: values
	// first, each set item over them in order.
	Set    []string       `yaml:"set" json:"set" doc:"Values as helm's --set takes them, e.g. loadBalancer.mode=dsr; later items win."`
	Values map[string]any `yaml:"values" json:"values" doc:"Values as a values file holds them; set items are applied over them."`
	// ReuseValues and ResetValues are helm's flags of the same names.
	ReuseValues bool `yaml:"reuseValues" json:"reuseValues" doc:"Start from the release's current values (helm's --reuse-values)."`
	ResetValues bool `yaml:"resetValues" json:"resetValues" doc:"Start from the chart's defaults only (helm's --reset-values)."`
	Install     bool `yaml:"install" json:"install" doc:"Install the release when it does not exist yet (helm upgrade --install)."`
}

// HelmRollback is `helm rollback RELEASE REVISION`.
type HelmRollback struct {
	Revision int `yaml:"revision" json:"revision" doc:"The revision to roll back to; 0 is the one before the current (as helm rollback without a revision)."`
}

// HelmRelease is a release after the step: what `helm status`, `helm get
// values` and `helm history` print, as data, and what the step changed.
type HelmRelease struct {
	// Name and Namespace are the release's.
	Name      string `json:"name" expr:"name"`
	Namespace string `json:"namespace" expr:"namespace"`
	// Revision is the release's revision after the step (1 after an
	// install, one more after each upgrade or rollback).
	Revision int `json:"revision" expr:"revision"`
	// Status is the revision's status: deployed, failed, superseded,
	// pending-upgrade, ...
	Status string `json:"status" expr:"status"`
	// Chart, ChartVersion and AppVersion are the release's chart's name,
	// version and appVersion (Chart.yaml: "cilium", "1.20.1",
	// "1.20.1"); "" when the release records no chart.
	Chart        string `json:"chart" expr:"chart"`
	ChartVersion string `json:"chartVersion" expr:"chartVersion"`
	AppVersion   string `json:"appVersion" expr:"appVersion"`
	// Description is Helm's note on the revision ("Install complete",
	// "Upgrade complete", "Rollback to 2").
	Description string `json:"description" expr:"description"`
	// Values are the values the release was given (helm get values),
	// not the chart's defaults.
	Values map[string]any `json:"values" expr:"values"`
	// PreviousRevision and PreviousValues are the release as the step
	// found it: the same as Revision and Values for a read; 0 and an
	// empty map when the step installed it.
	PreviousRevision int            `json:"previousRevision" expr:"previousRevision"`
	PreviousValues   map[string]any `json:"previousValues" expr:"previousValues"`
	// Changed lists every value that differs between PreviousValues and
	// Values, by its dotted path, sorted.
	Changed []HelmValueChange `json:"changed" expr:"changed"`
	// History is every revision Helm keeps, oldest first: revision,
	// status and time, from the labels of its Secrets.
	History []HelmRevision `json:"history" expr:"history"`
}

// HelmValueChange is one value the step changed. Before or After is null
// where the release had no such value.
type HelmValueChange struct {
	// Path is the value's dotted path, as helm's --set writes it
	// ("hubble.relay.enabled"; a dot in a key is escaped: a\.b).
	Path string `json:"path" expr:"path"`
	// Before is the value before the step; null when the release had
	// none there.
	Before any `json:"before" expr:"before" nullable:"true"`
	// After is the value after the step; null when the step removed it.
	After any `json:"after" expr:"after" nullable:"true"`
}

// HelmRevision is one revision Helm keeps, as the labels of its Secret
// say: `helm history`'s revision, status and time. (The chart and
// description of the current revision are the release's own fields; an
// older revision's would cost decoding its whole stored copy of the
// chart.)
type HelmRevision struct {
	// Revision is the revision's number, from 1.
	Revision int `json:"revision" expr:"revision"`
	// Status is the revision's status: deployed (the current one),
	// superseded, failed, pending-upgrade, ...
	Status string `json:"status" expr:"status"`
	// Updated is when Helm last wrote the revision's record, RFC 3339,
	// to the second (its Secret's modifiedAt or createdAt label).
	Updated string `json:"updated" expr:"updated"`
}

// Secrets are where Helm keeps a release: one Secret per revision,
// labelled owner=helm and name=RELEASE, in the release's namespace.
var Secrets = Resource{Resource: "secrets", Kind: "Secret", Namespaced: true}

// HelmReadAccess is what reading a release asks: a list of its Secrets
// (their labels are its history) and a get of the newest (the release,
// with its values). RBAC cannot narrow a list to one release's Secrets,
// so a grader that reads a release may list every Secret of its
// namespace: reading a release is reading its values, which is why Helm
// keeps them in Secrets.
func HelmReadAccess(ns string) []Access { return Secrets.Access(ns, "get", "list") }

// HelmChangeAccess is what an upgrade or a rollback asks: everything,
// cluster-wide. It writes whatever objects the chart renders with values
// known only at the run (the release's own, for reuseValues and for a
// rollback), and where those include Roles and bindings, RBAC lets only
// a subject that holds every permission they grant create them. So the
// honest least privilege of a Helm change is the chart's whole reach,
// which for a chart like Cilium's is the cluster; labrun says so instead
// of printing a Role that would fail halfway through the upgrade.
func HelmChangeAccess() []Access {
	return []Access{{Verb: "*", Group: "*", Resource: "*"}}
}

// HelmConnectError is labrun's Helm not reaching the cluster at all (no
// usable kubeconfig): a broken setup, as for labrun's own connection.
type HelmConnectError struct {
	Err error
}

func (e *HelmConnectError) Error() string { return e.Err.Error() }
func (e *HelmConnectError) Unwrap() error { return e.Err }

// HelmChangeError is an upgrade or a rollback Helm could not make for a
// reason of the lab's own: the chart is not found or not loadable, a
// template or the chart's values schema refuses the values, or the API
// server refuses an object the chart rendered with them. The runner
// reports it as a broken lab (config), not as a wrong answer: the
// objects came from the playbook's chart and values, not from the
// learner. A change that failed because the cluster did not answer or
// refused labrun, or whose time ran out, is not one; it keeps that class.
type HelmChangeError struct {
	Err error
}

func (e *HelmChangeError) Error() string { return e.Err.Error() }
func (e *HelmChangeError) Unwrap() error { return e.Err }
