package fleet

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	"gopkg.in/yaml.v3"
)

// Job is what labrun fleet render needs to print the Indexed Job that
// grades every target of a targets file inside the cluster: an index per
// shard of the targets, each graded by one pod.
type Job struct {
	Name, Namespace, Image string
	// Pods is how many shards the targets are cut into (the Job's
	// completions), Parallelism how many of their pods run at once, and
	// PerPod how many targets each pod checks at once (Size).
	Pods, Parallelism, PerPod int
	// BackoffLimitPerIndex is how many times a shard is retried after
	// its pod failed (stopped, out of memory, its results not stored);
	// MaxFailedIndexes how many shards may fail before the Job stops (a
	// Job whose pods cannot store their results fails them all).
	BackoffLimitPerIndex, MaxFailedIndexes int
	// Timeout bounds one target's check (labrun check --timeout): a
	// check that hangs ends with exit 4 and is retried.
	Timeout time.Duration
	// Playbook is the playbook's file, PlaybookData its bytes, and
	// TargetsData the targets file's, which the ConfigMap carries as
	// they are (so that a message's line numbers stay true in the pod).
	Playbook                  string
	PlaybookData, TargetsData []byte
	// Set are --set values every target's check takes.
	Set []string
	// Includes are the files the playbook reads beside itself (its write
	// steps' schemas, say), by their path from the playbook's directory,
	// where the ConfigMap puts them in the pod too.
	Includes []File
	// OutputsVar and Outputs are the learners' files (--outputs,
	// ReadOutputs), carried by a ConfigMap of their own; each pod mounts
	// its index's and sets OutputsVar to its target's directory there.
	OutputsVar string
	Outputs    []File
}

// The paths inside the pod.
const (
	mountDir   = "/lab"
	targetsKey = "targets.yaml"
)

// Exit codes of labrun fleet grade, a pod of the Job, which the Job's
// podFailurePolicy reads (docs/fleet.md): a shard whose every target has
// its result stored, whatever the verdicts, exits 0.
const (
	exitConfig    = 2
	exitTransport = 3
	exitTimeout   = 4
	exitInterrupt = 130
)

// DeriveNeeds derives the permissions labrun check needs for every
// namespace target of ts (the playbook loaded with its variables, its
// requests that name no namespace going to its namespace), merged. A
// target whose variables or playbook are refused is an error.
func DeriveNeeds(playbook string, ts *Targets, base runner.Options) ([]access.Need, error) {
	var all [][]access.Need
	for _, t := range ts.List {
		if t.Context != "" {
			return nil, fmt.Errorf("%s: target %q names a kubeconfig context: a Job's pods reach only their own cluster; list namespaces", t.Pos, t.Name)
		}
		plan, err := runner.Load(playbook, ts.Options(t, base))
		if err != nil {
			return nil, fmt.Errorf("target %q (%s): %w", t.Name, t.Pos, err)
		}
		needs, err := access.Derive(plan, access.Options{Mode: actions.Check, Namespace: t.Namespace})
		if err != nil {
			return nil, fmt.Errorf("target %q (%s): %w", t.Name, t.Pos, err)
		}
		all = append(all, needs)
	}
	return access.Merge(all...), nil
}

// configKey is what a ConfigMap key may be.
var configKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// newConfigMap holds files in a ConfigMap: as text under data, but a file
// a terminal would act on (a control character, a bidi override, bytes
// that are not UTF-8: a playbook may come from a stranger, and render's
// YAML is read on a terminal before kubectl applies it) goes base64 under
// binaryData, which the pods' volume gives back byte for byte.
func newConfigMap(meta objectMeta, files map[string]string) configMap {
	cm := configMap{object: object{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta}, Data: map[string]string{}}
	for k, v := range files {
		if visible.Text(v) == v {
			cm.Data[k] = v
			continue
		}
		if cm.BinaryData == nil {
			cm.BinaryData = map[string]string{}
		}
		cm.BinaryData[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return cm
}

// Render writes the Job's objects, as YAML kubectl applies: its
// ServiceAccount, the ConfigMap with the playbook and the targets, the
// Roles needs asks for (access.WriteRoles, named roleName) with a binding
// of each to the ServiceAccount, the Role that lets the pods store their
// results, and the Indexed Job.
func Render(w io.Writer, j Job, ts *Targets, needs []access.Need, roleName string) error {
	key := filepath.Base(j.Playbook)
	if !configKey.MatchString(key) || key == targetsKey {
		return fmt.Errorf("the playbook's file name %q cannot be a ConfigMap key (letters, digits, '-', '_', '.'; not %s)", key, targetsKey)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# labrun fleet render: grade %d targets of %s with playbook %s\n# in an Indexed Job of %s, a shard of the targets each (docs/fleet.md).\n",
		len(ts.List), filepath.Base(ts.File), key, plural(j.Pods, "pod"))
	meta := objectMeta{Name: j.Name, Namespace: j.Namespace, Labels: labels(j.Name)}
	lab := map[string]string{key: string(j.PlaybookData), targetsKey: string(j.TargetsData)}
	for i, f := range j.Includes {
		lab[includeKey(i)] = string(f.Data)
	}
	if len(lab) != 2+len(j.Includes) {
		return fmt.Errorf("the playbook's file name %q is a key of an included file's", key)
	}
	docs := []any{
		object{APIVersion: "v1", Kind: "ServiceAccount", Metadata: meta},
		newConfigMap(meta, lab),
	}
	if j.OutputsVar != "" {
		data := map[string]string{}
		for _, f := range j.Outputs {
			data[f.Key] = string(f.Data)
		}
		om := meta
		om.Name = outputsName(j)
		docs = append(docs, newConfigMap(om, data))
	}
	for _, d := range docs {
		if err := writeDoc(&b, d); err != nil {
			return err
		}
	}
	b.WriteString("---\n")
	if err := writeCheckRoles(&b, j, needs, roleName, key); err != nil {
		return err
	}
	b.WriteString("---\n" + resultsComment)
	for _, d := range resultsRole(j) {
		if err := writeDoc(&b, d); err != nil {
			return err
		}
	}
	b.WriteString("---\n" + jobComment)
	if err := writeDoc(&b, jobObject(j, key, len(ts.List))); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func includeKey(i int) string { return fmt.Sprintf("include-%d", i) }

func outputsName(j Job) string { return j.Name + "-outputs" }

// labItems are the lab ConfigMap's keys as paths in the pod, when it
// carries included files (else every key is its own path).
func labItems(j Job, key string) []keyToPath {
	if len(j.Includes) == 0 {
		return nil
	}
	items := []keyToPath{{Key: key, Path: key}, {Key: targetsKey, Path: targetsKey}}
	for i, f := range j.Includes {
		items = append(items, keyToPath{Key: includeKey(i), Path: f.Path})
	}
	return items
}

// resultsComment says what the results Role is for, above it.
const resultsComment = `# The pods store each shard's results in a ConfigMap of this namespace,
# created once (NAME-<the Job's UID>-<shard>), where they outlast the pods
# and the Job: they may create ConfigMaps here, and not read, change or
# delete one. labrun fleet collect reads them.
`

// jobComment says what the Job's pods do and what its podFailurePolicy
// does, above the Job.
const jobComment = `# Each index is a shard of the targets: its pod checks them, as check
# --targets does, and stores their results. A shard whose every target has
# a result stored exits 0, whatever the verdicts (a broken target, a
# refused permission, a cluster that did not answer are results too).
# Exit 2 (the results cannot be stored: a missing permission, a bad
# command line) fails the index at once: a retry would fail the same way.
# Exit 3 (the cluster did not answer the store) and 130 (the pod was
# stopped) are retried up to backoffLimitPerIndex, the retry grading the
# shard again; a disruption (eviction, preemption) is retried without
# counting. A retry finding its shard's results stored stops: those stand.
`

// writeDoc writes v as one YAML document after a separator.
func writeDoc(b *bytes.Buffer, v any) error {
	var doc bytes.Buffer
	enc := yaml.NewEncoder(&doc)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "---\n") && !strings.HasSuffix(b.String(), jobComment) && !strings.HasSuffix(b.String(), resultsComment) {
		b.WriteString("---\n")
	}
	b.Write(doc.Bytes())
	return nil
}

func labels(name string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "labrun", "app.kubernetes.io/instance": name}
}

// writeCheckRoles writes the permissions labrun check needs for every
// target (needs) and their bindings to the Job's ServiceAccount. When
// each target's namespace needs the same rules, as a class's do, one
// ClusterRole (SharedRoleName) holds them and a RoleBinding in each
// namespace binds it there, where alone it grants them: half the objects
// of a Role and a RoleBinding a namespace, for a class of hundreds to
// apply. Otherwise each namespace has its Role (access.WriteRoles). The
// cluster-wide permissions are a ClusterRole, roleName, bound by a
// ClusterRoleBinding.
func writeCheckRoles(b *bytes.Buffer, j Job, needs []access.Need, roleName, key string) error {
	header := fmt.Sprintf("The permissions labrun check of %s needs in each target's namespace,\nderived from its steps (labrun rbac --mode check).", key)
	shared, ok := sameInEach(needs)
	if !ok {
		if err := access.WriteRoles(b, needs, roleName, header); err != nil {
			return err
		}
		return writeBindings(b, j, needs, roleName, roleName, "Role")
	}
	var cluster []access.Need
	for _, n := range needs {
		if n.Namespace == "" {
			cluster = append(cluster, n)
		}
	}
	if len(cluster) > 0 {
		if err := access.WriteRoles(b, cluster, roleName, "The permissions labrun check of "+key+" needs cluster-wide,\nderived from its steps (labrun rbac --mode check)."); err != nil {
			return err
		}
		b.WriteString("---\n")
	}
	header += "\nThey are the same in every one: one ClusterRole holds them, and a\nRoleBinding in each target's namespace grants them there alone."
	if err := access.WriteRoles(b, shared, SharedRoleName(j), header); err != nil {
		return err
	}
	return writeBindings(b, j, needs, roleName, SharedRoleName(j), "ClusterRole")
}

// SharedRoleName is the name of the ClusterRole that holds the rules every
// target's namespace of Job j needs, and of its RoleBindings: the Job's
// own, by its name and namespace, as ClusterRoles are cluster-wide, so
// that another class's Job of the same lab, whose rules may differ, has
// another. Delete it with the Job's namespace's objects when the class
// is done: it is not in that namespace.
func SharedRoleName(j Job) string { return j.Name + "-check-" + j.Namespace }

// sameInEach reports whether each namespace of needs (more than one)
// needs the same permissions, for the same steps, and returns those,
// namespace left out.
func sameInEach(needs []access.Need) ([]access.Need, bool) {
	byNS := map[string][]access.Need{}
	var order []string
	for _, n := range needs {
		ns := n.Namespace
		if ns == "" {
			continue
		}
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		n.Namespace = ""
		byNS[ns] = append(byNS[ns], n)
	}
	if len(order) < 2 {
		return nil, false
	}
	first := byNS[order[0]]
	for _, ns := range order[1:] {
		if !reflect.DeepEqual(byNS[ns], first) {
			return nil, false
		}
	}
	return first, true
}

// writeBindings writes a binding of each namespace's permissions in
// needs to the Job's ServiceAccount: a RoleBinding in each target's
// namespace of nsRole, of kind nsKind (Role, or the one ClusterRole they
// share), named as it, and a ClusterRoleBinding of the ClusterRole
// roleName when needs has cluster-wide permissions. A binding's role
// cannot change, so one of the shared ClusterRole has a name of its own:
// a Job rendered for part of the class, whose namespace then has a Role,
// is applied beside it.
func writeBindings(b *bytes.Buffer, j Job, needs []access.Need, roleName, nsRole, nsKind string) error {
	seen := map[string]bool{}
	for _, n := range needs {
		if seen[n.Namespace] {
			continue
		}
		seen[n.Namespace] = true
		rb := roleBinding{
			object:   object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Metadata: objectMeta{Name: nsRole, Namespace: n.Namespace, Labels: labels(j.Name)}},
			RoleRef:  roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: nsKind, Name: nsRole},
			Subjects: []subject{{Kind: "ServiceAccount", Name: j.Name, Namespace: j.Namespace}},
		}
		if n.Namespace == "" {
			rb.Kind, rb.RoleRef.Kind, rb.RoleRef.Name, rb.Metadata.Name = "ClusterRoleBinding", "ClusterRole", roleName, roleName
		}
		if err := writeDoc(b, rb); err != nil {
			return err
		}
	}
	return nil
}

// resultsRole is the Role that lets the Job's pods store their results
// (create ConfigMaps in the Job's namespace: creating cannot be narrowed to
// names, and nothing else is granted) and its binding to the Job's
// ServiceAccount.
func resultsRole(j Job) []any {
	meta := objectMeta{Name: j.Name + "-results", Namespace: j.Namespace, Labels: labels(j.Name)}
	return []any{
		roleObject{object: object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Metadata: meta},
			Rules: []policyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}}},
		roleBinding{
			object:   object{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Metadata: meta},
			RoleRef:  roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: meta.Name},
			Subjects: []subject{{Kind: "ServiceAccount", Name: j.Name, Namespace: j.Namespace}},
		},
	}
}

// The pod's resources, from what the labrun container used on the test
// cluster (docs/fleet.md): its memory cgroup peaked at 10.9-12.0 MB (p50)
// grading a shard of 200-250 learners of the small lab, at most 18.2 MB
// (a node's first pod, which is charged for reading labrun's binary into
// the page cache), and check --targets of 200 takes 0.57 s of CPU over
// its 1.05 s. The requests are what the scheduler sets aside for the pod, so
// the Job's pods count on the node like the learners' own; the limits
// bound what a class's Job can take there (a pod's shard grades a little
// slower at half a CPU), so it cannot starve the learners' pods.
var podResources = map[string]any{
	"requests": map[string]string{"cpu": "100m", "memory": "16Mi"},
	"limits":   map[string]string{"cpu": "500m", "memory": "64Mi"},
}

// jobObject is the Indexed Job of j.Pods indexes, a shard of the n
// targets each, running the playbook stored under key. Its pods are given
// no kubeconfig: labrun in a pod without one connects in-cluster, as the
// pod's ServiceAccount (the token, its CA and namespace Kubernetes
// mounts, the API server the kubelet's KUBERNETES_SERVICE_HOST names), so
// the Job needs no address of the API server, works on a cluster without
// DNS, and the token is the one the kubelet rotates.
// automountServiceAccountToken is set so that a ServiceAccount made not to
// mount its token still has it mounted here. The downward API gives each
// pod its shard, its Job's UID (which names the results it stores), its
// attempt and its own name.
func jobObject(j Job, key string, n int) job {
	args := []string{"fleet", "grade", mountDir + "/" + key, "--targets", mountDir + "/" + targetsKey,
		"--shard", fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", j.Pods), "--parallel", fmt.Sprint(j.PerPod),
		"--namespace", j.Namespace, "--job", j.Name, "--job-uid", "$(JOB_UID)",
		"--attempt", "$(JOB_INDEX_FAILURE_COUNT)", "--pod", "$(POD_NAME)", "--no-progress"}
	if j.Timeout > 0 {
		args = append(args, "--timeout", j.Timeout.String())
	}
	for _, s := range j.Set {
		args = append(args, "--set", s)
	}
	volumes := []volume{
		{Name: "lab", ConfigMap: &configMapRef{Name: j.Name, Items: labItems(j, key)}},
		{Name: "tmp", EmptyDir: &struct{}{}},
	}
	mounts := []volumeMount{{Name: "lab", MountPath: mountDir, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}}
	if j.OutputsVar != "" {
		args = append(args, "--outputs", j.OutputsVar+"="+outputsMount)
		var items []keyToPath
		for _, f := range j.Outputs {
			items = append(items, keyToPath{Key: f.Key, Path: f.Path})
		}
		volumes = append(volumes, volume{Name: "outputs", ConfigMap: &configMapRef{Name: outputsName(j), Items: items}})
		mounts = append(mounts, volumeMount{Name: "outputs", MountPath: outputsMount, SubPathExpr: "$(JOB_COMPLETION_INDEX)", ReadOnly: true})
	}
	fromField := func(name, path string) env {
		return env{Name: name, ValueFrom: map[string]any{"fieldRef": map[string]string{"fieldPath": path}}}
	}
	no, yes := false, true
	meta := objectMeta{Name: j.Name, Namespace: j.Namespace, Labels: labels(j.Name), Annotations: map[string]string{annotationTargets: fmt.Sprint(n)}}
	return job{
		object: object{APIVersion: "batch/v1", Kind: "Job", Metadata: meta},
		Spec: jobSpec{
			CompletionMode: "Indexed", Completions: j.Pods, Parallelism: min(j.Parallelism, j.Pods),
			BackoffLimitPerIndex: j.BackoffLimitPerIndex, MaxFailedIndexes: min(j.MaxFailedIndexes, j.Pods),
			PodFailurePolicy: podFailurePolicy{Rules: []failureRule{
				{Action: "FailIndex", OnExitCodes: &exitCodes{ContainerName: Container, Operator: "In", Values: []int{exitConfig}}},
				{Action: "Ignore", OnPodConditions: []podCondition{{Type: "DisruptionTarget", Status: "True"}}},
				{Action: "Count", OnExitCodes: &exitCodes{ContainerName: Container, Operator: "In", Values: []int{1, exitTransport, exitTimeout, exitInterrupt}}},
			}},
			Template: podTemplate{
				Metadata: objectMeta{Labels: labels(j.Name)},
				Spec: podSpec{
					ServiceAccountName: j.Name, AutomountServiceAccountToken: true, RestartPolicy: "Never",
					SecurityContext: map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]string{"type": "RuntimeDefault"}},
					Volumes:         volumes,
					Containers: []container{{
						Name: Container, Image: j.Image, ImagePullPolicy: "IfNotPresent", Args: args,
						Env: []env{
							fromField("JOB_COMPLETION_INDEX", "metadata.annotations['"+annotationIndex+"']"),
							fromField("JOB_INDEX_FAILURE_COUNT", "metadata.annotations['"+annotationFailed+"']"),
							fromField("JOB_UID", "metadata.labels['"+labelControllerUID+"']"),
							fromField("POD_NAME", "metadata.name"),
						},
						SecurityContext: map[string]any{"allowPrivilegeEscalation": &no, "readOnlyRootFilesystem": &yes, "capabilities": map[string]any{"drop": []string{"ALL"}}},
						Resources:       podResources,
						VolumeMounts:    mounts,
					}},
				},
			},
		},
	}
}

// plural is "1 pod", "2 pods".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// The objects' shapes, in the order kubectl prints their fields.
type (
	object struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
	}
	objectMeta struct {
		Name        string            `yaml:"name,omitempty"`
		Namespace   string            `yaml:"namespace,omitempty"`
		Labels      map[string]string `yaml:"labels,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	roleObject struct {
		object `yaml:",inline"`
		Rules  []policyRule `yaml:"rules"`
	}
	policyRule struct {
		APIGroups []string `yaml:"apiGroups,flow"`
		Resources []string `yaml:"resources,flow"`
		Verbs     []string `yaml:"verbs,flow"`
	}
	configMap struct {
		object     `yaml:",inline"`
		Data       map[string]string `yaml:"data"`
		BinaryData map[string]string `yaml:"binaryData,omitempty"`
	}
	roleBinding struct {
		object   `yaml:",inline"`
		RoleRef  roleRef   `yaml:"roleRef"`
		Subjects []subject `yaml:"subjects"`
	}
	roleRef struct {
		APIGroup string `yaml:"apiGroup"`
		Kind     string `yaml:"kind"`
		Name     string `yaml:"name"`
	}
	subject struct {
		Kind      string `yaml:"kind"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	}
	job struct {
		object `yaml:",inline"`
		Spec   jobSpec `yaml:"spec"`
	}
	jobSpec struct {
		CompletionMode       string           `yaml:"completionMode"`
		Completions          int              `yaml:"completions"`
		Parallelism          int              `yaml:"parallelism"`
		BackoffLimitPerIndex int              `yaml:"backoffLimitPerIndex"`
		MaxFailedIndexes     int              `yaml:"maxFailedIndexes"`
		PodFailurePolicy     podFailurePolicy `yaml:"podFailurePolicy"`
		Template             podTemplate      `yaml:"template"`
	}
	podFailurePolicy struct {
		Rules []failureRule `yaml:"rules"`
	}
	failureRule struct {
		Action          string         `yaml:"action"`
		OnExitCodes     *exitCodes     `yaml:"onExitCodes,omitempty"`
		OnPodConditions []podCondition `yaml:"onPodConditions,omitempty"`
	}
	exitCodes struct {
		ContainerName string `yaml:"containerName"`
		Operator      string `yaml:"operator"`
		Values        []int  `yaml:"values,flow"`
	}
	podCondition struct {
		Type   string `yaml:"type"`
		Status string `yaml:"status"`
	}
	podTemplate struct {
		Metadata objectMeta `yaml:"metadata"`
		Spec     podSpec    `yaml:"spec"`
	}
	podSpec struct {
		ServiceAccountName           string         `yaml:"serviceAccountName"`
		AutomountServiceAccountToken bool           `yaml:"automountServiceAccountToken"`
		RestartPolicy                string         `yaml:"restartPolicy"`
		SecurityContext              map[string]any `yaml:"securityContext"`
		Volumes                      []volume       `yaml:"volumes"`
		Containers                   []container    `yaml:"containers"`
	}
	volume struct {
		Name      string        `yaml:"name"`
		ConfigMap *configMapRef `yaml:"configMap,omitempty"`
		EmptyDir  *struct{}     `yaml:"emptyDir,omitempty"`
	}
	configMapRef struct {
		Name  string      `yaml:"name"`
		Items []keyToPath `yaml:"items,omitempty"`
	}
	keyToPath struct {
		Key  string `yaml:"key"`
		Path string `yaml:"path"`
	}
	container struct {
		Name            string         `yaml:"name"`
		Image           string         `yaml:"image"`
		ImagePullPolicy string         `yaml:"imagePullPolicy"`
		Args            []string       `yaml:"args"`
		Env             []env          `yaml:"env"`
		SecurityContext map[string]any `yaml:"securityContext"`
		Resources       map[string]any `yaml:"resources"`
		VolumeMounts    []volumeMount  `yaml:"volumeMounts"`
	}
	env struct {
		Name      string         `yaml:"name"`
		ValueFrom map[string]any `yaml:"valueFrom"`
	}
	volumeMount struct {
		Name        string `yaml:"name"`
		MountPath   string `yaml:"mountPath"`
		SubPathExpr string `yaml:"subPathExpr,omitempty"`
		ReadOnly    bool   `yaml:"readOnly,omitempty"`
	}
)
