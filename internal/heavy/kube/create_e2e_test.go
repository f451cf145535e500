//go:build e2e

package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// Create as a ServiceAccount that may only create ConfigMaps (the Role a
// pod of labrun fleet render's Job is given for its results): the first
// create of a name succeeds, a second is an *ExistsError and leaves the
// first's data, and the identity can neither read nor change what it
// created.
func TestE2ECreateOnce(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	applyText(t, c, ns, `apiVersion: v1
kind: ServiceAccount
metadata: {name: storer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: results}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: results}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: results}
subjects:
- {kind: ServiceAccount, name: storer, namespace: `+ns+`}
`)
	sc := tokenClient(t, c, ns, "storer")
	cm := func(value string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "shard-0", "namespace": ns}, "data": map[string]any{"k": value}}
	}
	if err := sc.Create(ctxT(t, 10*time.Second), cm("first")); err != nil {
		t.Fatalf("the first create: %v", err)
	}
	err := sc.Create(ctxT(t, 10*time.Second), cm("second"))
	var exists *cluster.ExistsError
	if !errors.As(err, &exists) || exists.Name != "shard-0" || exists.Namespace != ns || exists.Kind != "ConfigMap" {
		t.Fatalf("the second create of the name: %v (%T), want an *ExistsError", err, err)
	}
	got, err := c.Get(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns, Name: "shard-0"})
	if err != nil || k8sobj.String(got, "data", "k") != "first" {
		t.Fatalf("the ConfigMap after two creates: %v, %v; want the first's data", got["data"], err)
	}
	if _, err := sc.List(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns}); !apierrors.IsForbidden(err) {
		t.Errorf("list as the storer: %v, want forbidden", err)
	}
	if _, err := sc.Label(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns, Name: "shard-0"}, cluster.LabelRequest{Set: map[string]string{"a": "b"}}); !apierrors.IsForbidden(err) {
		t.Errorf("label as the storer: %v, want forbidden", err)
	}
	other := cm("x")
	other["metadata"].(map[string]any)["namespace"] = "default"
	if err := sc.Create(ctxT(t, 10*time.Second), other); !apierrors.IsForbidden(err) {
		t.Errorf("create in another namespace: %v, want forbidden", err)
	}
}

// tokenClient connects as ServiceAccount sa of ns, by a token, as a pod
// of it would.
func tokenClient(t *testing.T, c *Client, ns, sa string) *Client {
	t.Helper()
	exp := int64(600)
	tr, err := typed(t, c).CoreV1().ServiceAccounts(ns).CreateToken(ctxT(t, 10*time.Second), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %s, certificate-authority-data: %s}\n"+
		"users:\n- name: u\n  user: {token: %s}\ncontexts:\n- name: u\n  context: {cluster: c, user: u, namespace: %s}\ncurrent-context: u\n",
		cfg.Host, b64(ca), tr.Status.Token, ns)
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := Connect(ConnectOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
