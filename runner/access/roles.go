package access

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/labrun/labrun/internal/lang/visible"
)

// RoleName is the name of the Roles of a playbook's permissions in a
// mode: labrun-NAME-MODE, the playbook's name made a valid object name.
func RoleName(playbook, mode string) string {
	name := strings.Trim(nameChars.ReplaceAllString(strings.ToLower(playbook), "-"), "-.")
	if name == "" {
		name = "playbook"
	}
	return "labrun-" + name + "-" + mode
}

// nameChars are what an RBAC object's name may not hold.
var nameChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// WriteRoles writes needs as RBAC objects kubectl applies: a ClusterRole
// for the cluster-wide permissions, then a Role in each namespace for
// its own, all named name (one rule per resource, above it a comment
// naming the steps that need each verb). header, when not empty, opens
// the document as a comment; without needs it is all there is, and says
// so. The document goes through visible.Text: the header names the
// playbook, and a carriage return in it would end the comment for a YAML
// reader, a control character act on the terminal.
func WriteRoles(w io.Writer, needs []Need, name, header string) error {
	var b strings.Builder
	if header != "" {
		for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
			b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	if len(needs) == 0 {
		b.WriteString("# The steps that run call no Kubernetes API: they need no permission.\n")
	}
	for i, role := range roles(needs) {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString("apiVersion: rbac.authorization.k8s.io/v1\n")
		if role.namespace == "" {
			fmt.Fprintf(&b, "kind: ClusterRole\nmetadata:\n  name: %s\n", name)
		} else {
			fmt.Fprintf(&b, "kind: Role\nmetadata:\n  name: %s\n  namespace: %s\n", name, role.namespace)
		}
		b.WriteString("rules:\n")
		for _, r := range role.rules {
			writeRule(&b, r)
		}
	}
	_, err := io.WriteString(w, visible.Text(b.String()))
	return err
}

// role is the permissions of one namespace ("" cluster-wide).
type role struct {
	namespace string
	rules     []rule
}

// rule is the verbs on one resource or subresource, each with the steps
// that need it.
type rule struct {
	group, resource string
	verbs           []Need
}

// roles groups needs, sorted as Derive sorts them, by namespace, then
// resource.
func roles(needs []Need) []role {
	var out []role
	for _, n := range needs {
		if len(out) == 0 || out[len(out)-1].namespace != n.Namespace {
			out = append(out, role{namespace: n.Namespace})
		}
		ro := &out[len(out)-1]
		res := n.Resource
		if n.Subresource != "" {
			res += "/" + n.Subresource
		}
		if len(ro.rules) == 0 || ro.rules[len(ro.rules)-1].group != n.Group || ro.rules[len(ro.rules)-1].resource != res {
			ro.rules = append(ro.rules, rule{group: n.Group, resource: res})
		}
		r := &ro.rules[len(ro.rules)-1]
		r.verbs = append(r.verbs, n)
	}
	return out
}

// writeRule writes one rule with its comment.
func writeRule(b *strings.Builder, r rule) {
	var why, verbs []string
	for _, v := range r.verbs {
		why = append(why, fmt.Sprintf("%s (%s)", v.Verb, strings.Join(v.Steps, ", ")))
		verbs = append(verbs, v.Verb)
	}
	fmt.Fprintf(b, "# %s: %s\n", r.resource, strings.Join(why, "; "))
	fmt.Fprintf(b, "- apiGroups: [%q]\n  resources: [%s]\n  verbs: [%s]\n", r.group, plain(r.resource), strings.Join(mapSlice(verbs, plain), ", "))
}

// plain is a resource or verb as a YAML flow item: as is, except "*",
// which unquoted would start a YAML alias.
func plain(s string) string {
	if s == "*" {
		return `"*"`
	}
	return s
}

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}
