package access

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// captured is one resource of the test cluster's aggregated discovery
// (internal/heavy/kube/testdata/discovery: Kubernetes 1.36.3, Cilium 1.20.1).
type captured struct {
	group, version, resource, kind, singular string
	namespaced                               bool
	shortNames                               []string
}

// capturedDiscovery lists the captured resources in the order kubectl
// prefers them: core, then the groups as the server lists them, each
// group's versions from preferred.
func capturedDiscovery(t *testing.T) []captured {
	t.Helper()
	var out []captured
	for _, f := range []string{"api.json", "apis.json"} {
		data, err := os.ReadFile("../../internal/heavy/kube/testdata/discovery/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Items []struct {
				Metadata struct{ Name string }
				Versions []struct {
					Version   string
					Resources []struct {
						Resource         string
						ResponseKind     struct{ Kind string }
						Scope            string
						SingularResource string
						ShortNames       []string
					}
				}
			}
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					out = append(out, captured{g.Metadata.Name, v.Version, r.Resource, r.ResponseKind.Kind, r.SingularResource, r.Scope == "Namespaced", r.ShortNames})
				}
			}
		}
	}
	return out
}

// Every kind of the table is what the test cluster serves: its group,
// resource, kind, scope, names and versions.
func TestKindsAsServed(t *testing.T) {
	served := capturedDiscovery(t)
	for _, k := range builtinKinds {
		var versions []string
		for _, c := range served {
			if c.group != k.Group || c.resource != k.Resource.Resource {
				continue
			}
			versions = append(versions, c.version)
			if c.kind != k.Kind || c.namespaced != k.Namespaced || c.singular != k.Singular || !slices.Equal(c.shortNames, k.ShortNames) {
				t.Errorf("%s.%s: the table has kind %s, namespaced %v, singular %q, short names %v; %s serves %s, %v, %q, %v",
					k.Resource.Resource, k.Group, k.Kind, k.Namespaced, k.Singular, k.ShortNames, c.version, c.kind, c.namespaced, c.singular, c.shortNames)
			}
		}
		if !slices.Equal(versions, k.Versions) {
			t.Errorf("%s.%s: the table has versions %v, the cluster serves %v", k.Resource.Resource, k.Group, k.Versions, versions)
		}
	}
}

// Every name the table knows resolves as kubectl resolves it on the test
// cluster: short names first, then resource, singular and lowercase
// kind, the first served in kubectl's order; with the group after a dot;
// by apiVersion and Kind.
func TestKindsResolveAsKubectl(t *testing.T) {
	served := capturedDiscovery(t)
	kubectl := func(name, group string) (string, bool) {
		for _, short := range []bool{true, false} {
			for _, c := range served {
				names := []string{c.resource, c.singular, strings.ToLower(c.kind)}
				if short {
					names = c.shortNames
				}
				if (group == "" || group == c.group) && slices.Contains(names, name) {
					return c.resource + "." + c.group, true
				}
			}
		}
		return "", false
	}
	ks := newKinds()
	for _, k := range builtinKinds {
		names := append([]string{k.Resource.Resource, k.Singular, k.Kind}, k.ShortNames...)
		for _, n := range names {
			for _, written := range []string{n, n + "." + k.Group} {
				want, _ := kubectl(strings.ToLower(n), strings.TrimPrefix(strings.TrimPrefix(written, n), "."))
				r, ok := ks.resolve("", written)
				if got := r.Resource + "." + r.Group; !ok || got != want {
					t.Errorf("%q resolves to %s (%v), kubectl's %s", written, got, ok, want)
				}
			}
		}
		for _, v := range k.Versions {
			apiVersion := k.Group + "/" + v
			if k.Group == "" {
				apiVersion = v
			}
			if r, ok := ks.resolve(apiVersion, k.Kind); !ok || r != k.Resource {
				t.Errorf("%s %s resolves to %+v (%v)", apiVersion, k.Kind, r, ok)
			}
		}
	}
	for _, bad := range [][2]string{{"", "nope"}, {"apps/v2", "Deployment"}, {"v1", "deployment"}, {"", "pods.apps"}} {
		if r, ok := ks.resolve(bad[0], bad[1]); ok {
			t.Errorf("%s %s resolves to %+v", bad[0], bad[1], r)
		}
	}
}
