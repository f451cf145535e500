package parse

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr"
)

// TestExprLabExpressions runs the expressions the cca-datapath playbook
// needs against parsed inputs, through expr-lang as the engine does: field
// names come from the expr tags, helper methods are callable.
func TestExprLabExpressions(t *testing.T) {
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	env := map[string]any{
		"status": must(ParseStatus(input(t, "synthetic/cilium-status/v1.20-verbose.txt"))),
		"svcs":   must(ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-json.txt"))),
		"lb":     must(ParseLBList(input(t, "synthetic/cilium-bpf-lb-list/v1.20-scaled.txt"))),
		"ct":     must(ParseCTList(input(t, "synthetic/cilium-bpf-ct-list/v1.20.txt"))),
		"ep":     must(ParseEndpointGet(input(t, "synthetic/cilium-endpoint-get/v1.20-holder.txt"))),
		"maps":   must(ParseMapList(input(t, "synthetic/cilium-map-list/v1.20.txt"))),
		"cfg":    must(ParseConfig(input(t, "synthetic/cilium-config/v1.20-all.txt"))),
		"net":    must(ParseBpftoolNetShow(input(t, "synthetic/bpftool-net-show/v7.3-tcx-cilium.txt"))),
		"tc":     must(ParseTCFilterShow(input(t, "local/tc-filter-show/tcx-ingress.txt"))),
		"ipt":    must(ParseIPTablesSave(input(t, "local/iptables-save/plain.txt"))),
		"ss":     must(ParseSS(input(t, "local/ss/Htln-sport-empty.txt"))),
		"nst":    must(ParseNetstat(input(t, "synthetic/netstat/busybox-lab.txt"))),
		"curl":   must(ParseCurl(input(t, "local/curl-w/kv-refused.txt"))),
	}
	cases := []struct {
		code string
		want any
	}{
		{`status.kubeProxyReplacement`, "True"},
		{`status.kubeProxyReplacementDetails.socketLBCoverage == "Full"`, true},
		{`status.Field("Attach Mode")`, "TCX"},
		{`svcs.Named("cca-dp", "web")[0].id`, ptr(7)},
		{`svcs.Named("cca-dp", "web")[0].frontend.HostPort()`, "10.43.77.5:80"},
		{`len(svcs.Named("cca-dp", "ghost")[0].backends)`, 0},
		{`svcs.Frontend("0.0.0.0:30780/TCP").id`, ptr(10)},
		{`lb.Backends(svcs.Named("cca-dp", "web")[0].frontend.String())`, []string{"10.42.0.31:8080", "10.42.0.32:8080", "10.42.0.33:8080", "10.42.0.34:8080"}},
		{`lb.Frontend("10.43.77.5:80/TCP").SlotCount()`, 4},
		{`len(filter(lb.entries, .frontend.String() == "10.43.77.5:80/TCP"))`, 5},
		{`ct.Count("SVC", ":40404")`, 0},
		{`ct.Find("OUT", ":40404")[0].dst.String()`, "10.42.0.32:8080"},
		{`ct.Find("OUT", ":40404")[0].src.String()`, "10.42.0.40:40404"},
		{`count(ct.entries, .direction == "SVC" && .src.port == 40404)`, 0},
		{`ep[0].networking.interfaceName`, "lxc3a6f7d4e8c73"},
		{`ep[0].networking.interfaceIndex`, 26},
		{`maps.PolicyMap(ep[0].id)`, "cilium_policy_v3_01234"},
		{`cfg.Get("ServiceNoBackendResponse")`, "reject"},
		{`net.Find("lxc3a6f7d4e8c73", "").attach`, "tcx/ingress"},
		{`net.Find("lxc3a6f7d4e8c73", "").program`, ptr("cil_from_container")},
		{`tc.lines`, 0},
		{`ipt.CountContaining("KUBE-SVC")`, 0},
		{`ipt.CountContaining("CILIUM") > 0`, true},
		{`len(ss.LocalPort(30780))`, 0},
		{`nst.Match("10.42.0.40:40404")[0].foreign.String()`, "10.42.0.32:8080"},
		{`curl.exitCode == 7`, true},
		{`curl.httpCode == 0`, true},
	}
	for _, c := range cases {
		prog, err := expr.Compile(c.code, expr.Env(env))
		if err != nil {
			t.Errorf("compile %s: %v", c.code, err)
			continue
		}
		got, err := expr.Run(prog, env)
		if err != nil {
			t.Errorf("run %s: %v", c.code, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v (%T), want %#v", c.code, got, got, c.want)
		}
	}
	// Go field names are not visible: the expr tags rename them.
	if _, err := expr.Compile(`status.KubeProxyReplacement`, expr.Env(env)); err == nil {
		t.Error("Go field name compiled; expr tags not in effect")
	}
}

// TestExprTypesCompile checks that expr type-checks member access on every
// field, at every depth, of every registered result type, by the name its
// expr tag gives (as the engine does at validate time), and that the Go
// field name is not reachable instead.
func TestExprTypesCompile(t *testing.T) {
	n := 0
	defer func() { t.Logf("%d member accesses compiled on %d result types", n, len(All)) }()
	for _, p := range All {
		env := map[string]any{"v": reflect.Zero(p.Result).Interface()}
		paths := fieldPaths("v", p.Result, 0)
		if len(paths) == 0 {
			t.Errorf("%s: result type %s has no field to read", p.Kind, p.Result)
		}
		for _, path := range paths {
			n++
			if _, err := expr.Compile(path, expr.Env(env)); err != nil {
				t.Errorf("%s: %s: %v", p.Kind, path, err)
			}
		}
	}
}

// fieldPaths lists an expression reading each exported field of t (by its
// expr name), descending into structs, pointers, lists ([0]) and maps
// with string keys (["k"]), to a depth of 5.
func fieldPaths(prefix string, t reflect.Type, depth int) []string {
	if depth > 5 {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return fieldPaths(prefix, t.Elem(), depth)
	case reflect.Slice, reflect.Array:
		return fieldPaths(prefix+"[0]", t.Elem(), depth+1)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return fieldPaths(prefix+`["k"]`, t.Elem(), depth+1)
		}
		return nil
	case reflect.Struct:
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			name := f.Tag.Get("expr")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.Anonymous && f.Tag.Get("expr") == "" {
				out = append(out, fieldPaths(prefix, f.Type, depth)...)
				continue
			}
			out = append(out, prefix+"."+name)
			out = append(out, fieldPaths(prefix+"."+name, f.Type, depth+1)...)
		}
		return out
	}
	return nil
}
