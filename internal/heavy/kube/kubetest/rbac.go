package kubetest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// Labrun runs labrun with args (in the test's process or as the built
// binary) and returns its exit code and output.
type Labrun func(args ...string) (code int, output string)

// CheckUnderDerivedRoles proves on the test cluster that the Roles
// `labrun rbac --mode check` prints for a playbook are what labrun check
// needs, no more, no less. It grants them to a new ServiceAccount and
// checks the lab (solved before) as that account: the check passes. Then
// it takes each permission away in turn: the preflight refuses at once
// (exit 2) naming it, and the test logs how long that took; without the
// preflight the check fails with a step refused as forbidden (exit 2):
// every permission is needed (without create of leases, the run's Lease
// is deleted before: a target's first run creates it). flags are the playbook's (--vars, --set
// out=...).
func CheckUnderDerivedRoles(t *testing.T, run Labrun, playbook string, flags ...string) {
	ns := NamespaceName("e2e-rbac")
	args := append(append([]string{"rbac", "--mode", "check", "--namespace", ns}, flags...), playbook)
	code, roles := run(args...)
	if code != 0 {
		t.Fatalf("labrun %s exited %d:\n%s", strings.Join(args, " "), code, roles)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	acct := newRoleAccount(ctx, t, Connect(t), ns, []byte(roles))
	check := func(extra ...string) (int, string, time.Duration) {
		args := append(append(append([]string{"check", "--no-progress", "--kubeconfig", acct.kubeconfig}, extra...), flags...), playbook)
		start := time.Now()
		code, out := run(args...)
		return code, out, time.Since(start)
	}
	if code, out, _ := check(); code != 0 {
		t.Fatalf("labrun check as %s under the derived Roles exited %d:\n%s\nRoles:\n%s", acct.user(), code, out, roles)
	}
	for _, p := range acct.permissions() {
		t.Run(p.String(), func(t *testing.T) {
			restore := acct.without(ctx, t, p)
			defer restore()
			code, out, took := check()
			if code != 2 || !strings.Contains(out, p.String()) {
				t.Errorf("without %s the preflight exited %d, want 2 naming it:\n%s", p, code, out)
			}
			// How fast is measured, not asserted: tests hold no timing.
			t.Logf("the preflight named %s in %s (the whole labrun check process)", p, took.Round(time.Millisecond))
			// A step the API server refuses fails as forbidden, exit 2.
			// Without create, the run's Lease is made anew, as on a
			// target's first run: only that one creates it.
			if p.Resource == cluster.Leases.Resource && p.Verb == "create" {
				acct.deleteLease(ctx, t)
			}
			if code, out, _ := check("--no-preflight"); code != 2 || !strings.Contains(out, "[forbidden]") {
				t.Errorf("without %s and without the preflight the check exited %d, want 2 with a step failed as [forbidden]: the permission is not needed\n%s", p, code, out)
			}
		})
	}
}

// roleAccount is a ServiceAccount bound to the Roles labrun rbac
// printed, and a kubeconfig that authenticates as it.
type roleAccount struct {
	cs         kubernetes.Interface
	as         *kube.Client // the account's own connection
	namespace  string
	kubeconfig string
	cluster    *rbacv1.ClusterRole // nil when the Roles hold none
	roles      []*rbacv1.Role
}

// account is the ServiceAccount's name.
const account = "grader"

func (a *roleAccount) user() string {
	return "system:serviceaccount:" + a.namespace + ":" + account
}

// newRoleAccount makes namespace ns with the ServiceAccount, creates the
// Roles of rolesYAML (the ClusterRole under a name of its own), binds
// them to it and writes its kubeconfig; all of it goes when the test
// ends.
func newRoleAccount(ctx context.Context, t *testing.T, c *kube.Client, ns string, rolesYAML []byte) *roleAccount {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	a := &roleAccount{cs: cs, namespace: ns}
	a.parse(t, rolesYAML)
	must(t, create(ctx, cs.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	t.Cleanup(func() { cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	must(t, create(ctx, cs.CoreV1().ServiceAccounts(ns), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}))
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: ns}}
	if a.cluster != nil {
		a.cluster.Name += "-" + ns // ClusterRoles are shared by every test
		must(t, create(ctx, cs.RbacV1().ClusterRoles(), a.cluster))
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: a.cluster.Name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: a.cluster.Name}}
		must(t, create(ctx, cs.RbacV1().ClusterRoleBindings(), binding))
		t.Cleanup(func() {
			cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
			cs.RbacV1().ClusterRoles().Delete(context.Background(), a.cluster.Name, metav1.DeleteOptions{})
		})
	}
	for _, r := range a.roles {
		r.Name += "-" + ns // Roles of the lab's namespaces are shared too
		must(t, create(ctx, cs.RbacV1().Roles(r.Namespace), r))
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}}
		must(t, create(ctx, cs.RbacV1().RoleBindings(r.Namespace), binding))
		t.Cleanup(func() {
			cs.RbacV1().RoleBindings(r.Namespace).Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
			cs.RbacV1().Roles(r.Namespace).Delete(context.Background(), r.Name, metav1.DeleteOptions{})
		})
	}
	a.kubeconfig = a.writeKubeconfig(ctx, t, c)
	as, err := kube.Connect(kube.ConnectOptions{Kubeconfig: a.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Close)
	a.as = as
	return a
}

// parse reads the ClusterRole and Roles of labrun rbac's output.
func (a *roleAccount) parse(t *testing.T, rolesYAML []byte) {
	for _, doc := range bytes.Split(rolesYAML, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("labrun rbac's output: %v\n%s", err, doc)
		}
		switch head.Kind {
		case "ClusterRole":
			a.cluster = &rbacv1.ClusterRole{}
			must(t, yaml.UnmarshalStrict(doc, a.cluster))
		case "Role":
			r := &rbacv1.Role{}
			must(t, yaml.UnmarshalStrict(doc, r))
			a.roles = append(a.roles, r)
		default:
			t.Fatalf("labrun rbac printed a %q:\n%s", head.Kind, doc)
		}
	}
}

// permissions lists every verb of every rule of the Roles.
func (a *roleAccount) permissions() []cluster.Access {
	var out []cluster.Access
	add := func(ns string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, res := range r.Resources {
				resource, sub, _ := strings.Cut(res, "/")
				for _, v := range r.Verbs {
					out = append(out, cluster.Access{Verb: v, Group: r.APIGroups[0], Resource: resource, Subresource: sub, Namespace: ns})
				}
			}
		}
	}
	if a.cluster != nil {
		add("", a.cluster.Rules)
	}
	for _, r := range a.roles {
		add(r.Namespace, r.Rules)
	}
	return out
}

// without takes p away from the account until restore, and waits until
// the API server refuses it (and, after restore, allows it again).
func (a *roleAccount) without(ctx context.Context, t *testing.T, p cluster.Access) (restore func()) {
	var rules []rbacv1.PolicyRule
	var update func([]rbacv1.PolicyRule) error
	if p.Namespace == "" { // a.cluster is nil when the Roles hold no ClusterRole, and then so is p
		rules, update = a.cluster.Rules, func(rules []rbacv1.PolicyRule) error {
			r := a.cluster.DeepCopy()
			r.Rules = rules
			_, err := a.cs.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{})
			return err
		}
	} else {
		i := slices.IndexFunc(a.roles, func(r *rbacv1.Role) bool { return r.Namespace == p.Namespace })
		role := a.roles[i]
		rules, update = role.Rules, func(rules []rbacv1.PolicyRule) error {
			r := role.DeepCopy()
			r.Rules = rules
			_, err := a.cs.RbacV1().Roles(r.Namespace).Update(ctx, r, metav1.UpdateOptions{})
			return err
		}
	}
	must(t, update(withoutVerb(rules, p)))
	a.await(ctx, t, p, false)
	return func() {
		must(t, update(rules))
		a.await(ctx, t, p, true)
	}
}

// deleteLease deletes the run's Lease (cluster.LeaseName) wherever the
// Roles grant leases, as the cluster's admin.
func (a *roleAccount) deleteLease(ctx context.Context, t *testing.T) {
	for _, p := range a.permissions() {
		if p.Resource != cluster.Leases.Resource || p.Verb != "create" {
			continue // one permission of each namespace's leases
		}
		err := a.cs.CoordinationV1().Leases(p.Namespace).Delete(ctx, cluster.LeaseName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// withoutVerb is rules with p's verb taken from p's resource.
func withoutVerb(rules []rbacv1.PolicyRule, p cluster.Access) []rbacv1.PolicyRule {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		r = *r.DeepCopy()
		if r.APIGroups[0] == p.Group && slices.Contains(r.Resources, res) {
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v == p.Verb })
		}
		if len(r.Verbs) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// await waits until the API server allows p to the account, or refuses
// it: RBAC's authorizer sees a changed Role a moment after it changed.
func (a *roleAccount) await(ctx context.Context, t *testing.T, p cluster.Access, allowed bool) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		denied, err := a.as.Denied(ctx, []cluster.Access{p})
		if err == nil && (len(denied) == 0) == allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not yet say %s is allowed=%v to %s (%v)", p, allowed, a.user(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// writeKubeconfig writes a kubeconfig with a token of the account, its
// context's namespace the account's.
func (a *roleAccount) writeKubeconfig(ctx context.Context, t *testing.T, c *kube.Client) string {
	return ServiceAccountKubeconfig(ctx, t, c, a.namespace, account)
}

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount name of namespace ns with a token of it (TokenRequest,
// an hour), to the test cluster c connects to, its context's namespace
// ns; the file goes when the test ends.
func ServiceAccountKubeconfig(ctx context.Context, t *testing.T, c *kube.Client, ns, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
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
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: cfg.Insecure}
	if cfg.Insecure {
		kc.Clusters["test"].CertificateAuthorityData = nil
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name, Namespace: ns}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	must(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// creator is what create needs of a typed client.
type creator[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}

func create[T any](ctx context.Context, c creator[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
