//go:build e2e

package e2e

// labrun in a pod, as a grader of a class runs it: labrun's image, no
// kubeconfig, a ServiceAccount bound only to the Role `labrun rbac --mode
// check` prints for the classroom lab in one learner's namespace. The lab
// is solved first from the host, as the cluster's admin; the pod then
// grades the learner's files (copied into it) in-cluster. Run like
// TestLabrunImage (in a clone, for make image's commit stamp):
//
//	LABRUN_KUBECONFIG=/var/lib/labrun-testbed/kubeconfig \
//	  go test -count=1 -tags e2e -run TestLabrunInCluster -v ./testbed/e2e/

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// inClusterManifest is the grader: its account, bound to the Role
// labrun rbac printed (ROLE is its name), the lab and the learner's files
// as ConfigMaps, and a pod that copies the files into a directory of its
// own (an output directory labrun accepts: owned by its user, mode 0700)
// and runs labrun check there.
const inClusterManifest = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: grader, namespace: NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: grader, namespace: NS}
subjects: [{kind: ServiceAccount, name: grader, namespace: NS}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ROLE}
---
apiVersion: v1
kind: Pod
metadata: {name: labrun, namespace: NS}
spec:
  restartPolicy: Never
  serviceAccountName: grader
  securityContext: {runAsNonRoot: true}
  volumes:
  - {name: lab, configMap: {name: lab, items: ITEMS}}
  - {name: answers, configMap: {name: answers}}
  - {name: work, emptyDir: {}}
  initContainers:
  - name: copy
    image: SHELL_IMAGE
    imagePullPolicy: Never
    securityContext: {runAsUser: 65532, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    command: [sh, -c, 'mkdir -m 700 /work/out && cp -L /answers/*.json /work/out/']
    volumeMounts: [{name: answers, mountPath: /answers, readOnly: true}, {name: work, mountPath: /work}]
  containers:
  - name: check
    image: IMAGE
    imagePullPolicy: Never
    args: [check, --no-progress, --set, namespace=NS, --set, out=/work/out, /lab/classroom.yaml]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    volumeMounts: [{name: lab, mountPath: /lab, readOnly: true}, {name: work, mountPath: /work}]
`

func TestLabrunInCluster(t *testing.T) {
	v := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	kc := kubetest.Kubeconfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	command(t, "make", "-C", "../..", "image")
	ref, _ := imageName(t, imageTarball)
	command(t, "../../testbed/lib/labrun-image.sh", imageTarball)

	ns := kubetest.NamespaceName("e2e-incluster")
	kubetest.ApplyInNamespace(ctx, t, c, ns, "the learner's namespace", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	out := t.TempDir()
	command(t, imageLabrun, "run", "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/classroom.testbed.yaml",
		"--set", "namespace="+ns, "--set", "out="+out, "../../playbooks/classroom.yaml")
	roles := command(t, imageLabrun, "rbac", "--mode", "check", "--namespace", ns, "--set", "namespace="+ns, "../../playbooks/classroom.yaml")
	if strings.Contains(roles, "ClusterRole") {
		t.Fatalf("labrun rbac printed a ClusterRole for the classroom lab:\n%s", roles)
	}

	lab := map[string]string{}
	var items []map[string]string
	for _, f := range []string{"classroom.yaml", "classroom/schemas/deploy.schema.json", "classroom/schemas/scale.schema.json",
		"classroom/schemas/expose.schema.json", "classroom/schemas/policy.schema.json"} {
		key := strings.ReplaceAll(f, "/", "_")
		lab[key] = readFile(t, filepath.Join("../../playbooks", f))
		items = append(items, map[string]string{"key": key, "path": f})
	}
	answers := map[string]string{}
	for _, f := range []string{"deploy.json", "scale.json", "expose.json", "policy.json"} {
		answers[f] = readFile(t, filepath.Join(out, f))
	}
	itemsJSON, _ := json.Marshal(items)
	manifest := roles + "\n---\n" + configMap(t, ns, "lab", lab) + "\n---\n" + configMap(t, ns, "answers", answers) + "\n---\n" +
		strings.NewReplacer("NS", ns, "ROLE", "labrun-classroom-check", "ITEMS", string(itemsJSON), "SHELL_IMAGE", v.CurlImage, "IMAGE", ref).Replace(inClusterManifest)
	if _, err := c.Apply(ctx, []cluster.ManifestSource{{Text: manifest, Label: "the grader"}}, cluster.ApplyRequest{}); err != nil {
		t.Fatal(err)
	}

	pods, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "labrun"}, func(pods []map[string]any) (bool, error) {
		phase := ""
		if len(pods) == 1 {
			phase = k8sobj.String(pods[0], "status", "phase")
		}
		return phase == "Succeeded" || phase == "Failed", nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := podLog(ctx, t, c, ns, "check")
	if phase := k8sobj.String(pods[0], "status", "phase"); phase != "Succeeded" || !strings.Contains(log, "classroom: PASSED") {
		t.Fatalf("the grader pod ended %s; its labrun check printed:\n%s", phase, log)
	}
	t.Logf("labrun check in the pod, as system:serviceaccount:%s:grader with no kubeconfig:\n%s", ns, log)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// configMap is a ConfigMap of data as a JSON manifest.
func configMap(t *testing.T, ns, name string, data map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]string{"name": name, "namespace": ns}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
