//go:build e2e

package e2e

// labrun's own image on the test cluster: `make image` builds it
// (cmd/labrun-image), testbed/lib/labrun-image.sh imports it into the
// nodes' containerd, and a pod on node 1 runs it as the image's own user
// (runAsNonRoot and no runAsUser: the kubelet refuses an image whose user
// is root): `labrun version` prints the line the host's bin/labrun prints,
// naming the commit this checkout is at, and `labrun validate` checks a
// playbook mounted from a ConfigMap.
//
// The test runs make image itself (cached by its inputs). go build stamps
// no commit in a git worktree (go.dev/issue/58218), so it runs in a clone:
// make image refuses the binary otherwise. As root, with the test cluster
// up (any profile):
//
//	LABRUN_KUBECONFIG=/var/lib/labrun-testbed/kubeconfig \
//	  go test -count=1 -tags e2e -run TestLabrunImage -v ./testbed/e2e/
//
// make e2e-single runs it with every test of ./testbed/e2e.

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

const (
	imageTarball = "../../bin/labrun-image.oci.tar"
	imageLabrun  = "../../bin/labrun"
)

// imagePlaybook is the lab the pod validates: it reads the cluster and
// writes a file, and needs no other file beside it.
const imagePlaybook = `name: image-e2e
vars:
  ns: default
outputDir: /tmp/labrun-out
steps:
  - id: pods
    get: {apiVersion: v1, kind: Pod, namespace: "${{ vars.ns }}"}
  - id: count
    write:
      path: pods.json
      json: {pods: "${{ len(steps.pods.items) }}"}
`

// imageManifest runs the image twice in one pod on node 1, as the image's
// default user: labrun version, and labrun validate of the playbook.
const imageManifest = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: playbook, namespace: NS}
data: {lab.yaml: PLAYBOOK}
---
apiVersion: v1
kind: Pod
metadata: {name: labrun, namespace: NS}
spec:
  nodeName: NODE1
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true}
  volumes: [{name: playbook, configMap: {name: playbook}}]
  containers:
  - name: version
    image: IMAGE
    imagePullPolicy: Never
    args: [version]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
  - name: validate
    image: IMAGE
    imagePullPolicy: Never
    args: [validate, /playbook/lab.yaml]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    volumeMounts: [{name: playbook, mountPath: /playbook, readOnly: true}]
`

func TestLabrunImage(t *testing.T) {
	v := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	command(t, "make", "-C", "../..", "image")
	ref, digest := imageName(t, imageTarball)
	hostVersion := strings.TrimSpace(command(t, imageLabrun, "version"))
	head := strings.TrimSpace(command(t, "git", "rev-parse", "HEAD"))[:12]
	if !strings.Contains(hostVersion, "(rev "+head) {
		t.Fatalf("bin/labrun version says %q: want it to name HEAD %s", hostVersion, head)
	}
	if tag := ref[strings.LastIndex(ref, ":")+1:]; strings.TrimSuffix(tag, "-dirty") != head {
		t.Fatalf("the image is %s: want it tagged HEAD %s", ref, head)
	}
	t.Logf("importing %s (%s)\n%s", ref, digest, command(t, "../../testbed/lib/labrun-image.sh", imageTarball))

	ns := kubetest.NamespaceName("e2e-image")
	playbook, err := json.Marshal(imagePlaybook)
	if err != nil {
		t.Fatal(err)
	}
	kubetest.ApplyInNamespace(ctx, t, c, ns, "labrun image", strings.NewReplacer(
		"NS", ns, "NODE1", v.NodeName, "IMAGE", ref, "PLAYBOOK", string(playbook)).Replace(imageManifest))
	pod := waitPodSucceeded(ctx, t, c, ns, "labrun")
	t.Logf("pod %s/labrun ran on %s, image ID %s", ns, k8sobj.String(pod, "spec", "nodeName"), containerImageID(pod))

	if got := podLog(ctx, t, c, ns, "version"); got != hostVersion {
		t.Errorf("labrun version in the image printed %q, the host's bin/labrun %q", got, hostVersion)
	}
	if got := podLog(ctx, t, c, ns, "validate"); !strings.HasPrefix(got, "/playbook/lab.yaml: image-e2e: valid, 2 steps") {
		t.Errorf("labrun validate in the image printed:\n%s", got)
	}
}

// command runs a command (from this package's directory) and returns its
// output, failing the test when it fails.
func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// imageName reads an OCI image-layout tarball's index and returns the
// name, other than :latest, that ctr images import gives its image, and
// the image's digest.
func imageName(t *testing.T, tarball string) (ref string, digest v1.Hash) {
	t.Helper()
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no index.json", tarball)
		} else if err != nil {
			t.Fatal(err)
		}
		if h.Name != "index.json" {
			continue
		}
		var index v1.IndexManifest
		if err := json.NewDecoder(tr).Decode(&index); err != nil {
			t.Fatalf("%s: index.json: %v", tarball, err)
		}
		for _, m := range index.Manifests {
			if name := m.Annotations["io.containerd.image.name"]; name != "" && !strings.HasSuffix(name, ":latest") {
				return name, m.Digest
			}
		}
		t.Fatalf("%s: index.json names no image but :latest: %+v", tarball, index.Manifests)
	}
}

// waitPodSucceeded waits until every container of the pod has exited 0,
// and fails at once when one cannot start or exits with an error (a
// root user under runAsNonRoot is CreateContainerConfigError).
func waitPodSucceeded(ctx context.Context, t *testing.T, c *kube.Client, ns, name string) map[string]any {
	t.Helper()
	pods, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}, func(pods []map[string]any) (bool, error) {
		if len(pods) == 0 {
			return false, nil
		}
		if f, failed := k8sobj.PodFailed(pods[0]); failed {
			return false, f
		}
		return k8sobj.String(pods[0], "status", "phase") == "Succeeded", nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pods[0]
}

// podLog is the log of one container of the pod "labrun", trimmed.
func podLog(ctx context.Context, t *testing.T, c *kube.Client, ns, container string) string {
	t.Helper()
	logs, err := c.Logs(ctx, cluster.PodTarget{Namespace: ns, Pod: "labrun", Container: container}, cluster.LogRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(logs.Text)
}

// containerImageID is the image ID the kubelet reports for the pod's
// first container: what the node ran, for the test's log.
func containerImageID(pod map[string]any) string {
	status, _ := pod["status"].(map[string]any)
	statuses, _ := status["containerStatuses"].([]any)
	if len(statuses) == 0 {
		return "(none reported)"
	}
	first, _ := statuses[0].(map[string]any)
	return k8sobj.String(first, "imageID")
}
