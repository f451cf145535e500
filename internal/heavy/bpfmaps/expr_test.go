package bpfmaps

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
)

// TestExprUse runs the kind of expressions a lab writes against real
// decoded maps, through expr-lang with the expr tags.
func TestExprUse(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	tcpMap := createPinned(t, root, MapCTTCP, specCT(64))
	createPinned(t, root, MapCTAny, specCT(64))
	tcp, _ := ctFixtures()
	for _, f := range tcp {
		put(t, tcpMap, f.k, f.v)
	}
	r := openReader(t, root)
	fes, err := r.Services()
	if err != nil {
		t.Fatal(err)
	}
	ct, err := r.Conntrack()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]any{"services": fes, "ct": ct}
	cases := []struct {
		src  string
		want any
	}{
		{`services.Find("10.43.0.5:80/TCP").Backends()`, []string{"10.42.0.17:8080", "10.42.0.18:8080", "10.42.0.19:8080"}},
		{`services.Find("10.43.0.5:80/TCP").count`, 2},
		{`len(services.Find("10.43.0.10:53/UDP").slots)`, 3},
		{`services.Find("0.0.0.0:30780/TCP").flagsText`, "NodePort, non-routable"},
		{`"non-routable" in services.Find("10.43.7.7:80/TCP").flagNames`, true},
		{`services.Has("10.43.7.7:80/TCP") && len(services.Find("10.43.7.7:80/TCP").Backends()) == 0`, true},
		{`services[1].Backends()`, []string{"10.42.0.17:8080", "10.42.0.18:8080", "10.42.0.19:8080"}},
		{`map(filter(services, len(.ActiveBackends()) == 2), .address)`, []string{"10.43.0.5:80/TCP", "10.43.0.10:53/UDP", "192.168.1.10:30780/TCP/i"}},
		{`services.Find("10.43.0.5:80/TCP").HasBackend("10.42.0.18:8080")`, true},
		{`len(ct.Matching(8080))`, 3},
		{`len(filter(ct, .direction == "SVC" && .backendId == 7))`, 1},
		{`ct.InDirection("OUT")[0].srcIp != ""`, true},
	}
	for _, c := range cases {
		prog, err := expr.Compile(c.src, expr.Env(env))
		if err != nil {
			t.Errorf("compile %s: %v", c.src, err)
			continue
		}
		out, err := expr.Run(prog, env)
		if err != nil {
			t.Errorf("run %s: %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(normalize(out), normalize(c.want)) {
			t.Errorf("%s = %#v, want %#v", c.src, out, c.want)
		}
	}
	// JSON: lists are [] not null (a field no byte holds is null).
	b, _ := json.Marshal(fes.Find("10.43.7.7:80/TCP"))
	if strings.Contains(string(b), `"flagNames":null`) || strings.Contains(string(b), `"slots":null`) {
		t.Errorf("JSON has a null list: %s", b)
	}
}

func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case uint16:
		return int64(x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i], _ = e.(string)
		}
		return s
	}
	return v
}
