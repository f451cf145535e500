package bpfmap

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/lang/eval"
)

// reader answers each map with one entry, and records what was asked.
type reader struct {
	asked    []string
	endpoint uint16
}

func (r *reader) Services() (bpfentries.Frontends, error) {
	r.asked = append(r.asked, "services")
	return bpfentries.Frontends{{Address: "10.43.0.5:80/TCP"}}, nil
}
func (r *reader) Backends() (bpfentries.Backends, error) {
	r.asked = append(r.asked, "backends")
	return bpfentries.Backends{{ID: 7}}, nil
}
func (r *reader) RevNATs() (bpfentries.RevNATs, error) {
	r.asked = append(r.asked, "revnat")
	return bpfentries.RevNATs{{ID: 3}}, nil
}
func (r *reader) Conntrack() (bpfentries.CTEntries, error) {
	r.asked = append(r.asked, "conntrack")
	return bpfentries.CTEntries{{Line: "x"}}, nil
}
func (r *reader) Policy(ep uint16) (bpfentries.PolicyEntries, error) {
	r.asked, r.endpoint = append(r.asked, "policy"), ep
	return bpfentries.PolicyEntries{{EndpointID: ep}}, nil
}
func (r *reader) IPCache() (bpfentries.IPCacheEntries, error) {
	r.asked = append(r.asked, "ipcache")
	return bpfentries.IPCacheEntries{{Identity: 2}}, nil
}
func (r *reader) Affinity() (bpfentries.Affinities, error) {
	r.asked = append(r.asked, "affinity")
	return bpfentries.Affinities{{BackendID: 4}}, nil
}
func (r *reader) SockRevNAT() (bpfentries.SockRevNATs, error) {
	r.asked = append(r.asked, "reversesk")
	return bpfentries.SockRevNATs{{Cookie: 9}}, nil
}

// The action reads the one map the spec names, through the reader the
// runtime hands over for the spec's root; the other lists stay empty, not
// null.
func TestReadsTheNamedMap(t *testing.T) {
	for _, m := range mapNames() {
		t.Run(m, func(t *testing.T) {
			r := &reader{}
			var root string
			rt := &actions.Runtime{BPFMaps: func(p string) (bpfentries.Reader, error) { root = p; return r, nil }}
			res, err := read(context.Background(), rt, &Spec{Map: m, Endpoint: 1234, Root: "/run/bpffs"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.asked, []string{m}) || root != "/run/bpffs" || res.Map != m {
				t.Fatalf("asked %v under %q, result for %q", r.asked, root, res.Map)
			}
			filled := map[string]int{"services": len(res.Services), "conntrack": len(res.Conntrack), "policy": len(res.Policy),
				"ipcache": len(res.IPCache), "backends": len(res.Backends), "revnat": len(res.RevNATs),
				"affinity": len(res.Affinity), "reversesk": len(res.ReverseSK)}
			for k, n := range filled {
				if want := map[bool]int{true: 1, false: 0}[k == m]; n != want {
					t.Errorf("%s has %d entries, want %d", k, n, want)
				}
			}
			if res.Services == nil || res.Conntrack == nil || res.Policy == nil || res.IPCache == nil || res.Backends == nil || res.RevNATs == nil ||
				res.Affinity == nil || res.ReverseSK == nil {
				t.Errorf("a list is nil: %+v", res)
			}
			if m == "policy" && r.endpoint != 1234 {
				t.Errorf("policy of endpoint %d, want 1234", r.endpoint)
			}
		})
	}
}

// The spec's doc, which editors and labrun actions show, names every map
// the action reads.
func TestSpecDocNamesEveryMap(t *testing.T) {
	f, _ := reflect.TypeOf(Spec{}).FieldByName("Map")
	doc := f.Tag.Get("doc")
	for _, name := range mapNames() {
		if !strings.Contains(doc, name) {
			t.Errorf("the doc of map does not name %s: %q", name, doc)
		}
	}
}

func TestReadRefuses(t *testing.T) {
	if _, err := read(context.Background(), &actions.Runtime{}, &Spec{Map: "services"}); !errors.Is(err, ErrNoBPFMaps) {
		t.Errorf("no reader: %v", err)
	}
	denied := errors.New("operation not permitted")
	rt := &actions.Runtime{BPFMaps: func(string) (bpfentries.Reader, error) { return nil, denied }}
	if _, err := read(context.Background(), rt, &Spec{Map: "services"}); !errors.Is(err, denied) {
		t.Errorf("reader refused: %v", err)
	}
	rt = &actions.Runtime{BPFMaps: func(string) (bpfentries.Reader, error) { return &reader{}, nil }}
	for spec, want := range map[Spec]string{
		{Map: "policy", Endpoint: 0}:       "endpoint 0 is not an endpoint id",
		{Map: "policy", Endpoint: 1 << 16}: "endpoint 65536 is not an endpoint id",
		{Map: "routes"}:                    `unknown map "routes"; expected one of [services conntrack policy ipcache backends revnat affinity reversesk]`,
	} {
		if _, err := read(context.Background(), rt, &spec); err == nil || err.Error() != want {
			t.Errorf("%+v: %v, want %q", spec, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	for spec, want := range map[string]string{
		"{map: services}":            "",
		"{map: policy, endpoint: 7}": "",
		"{map: policy}":              "p.yaml:1:1: map: policy needs endpoint (the endpoint id)",
		"{map: service}":             `p.yaml:1:7: unknown map "service" (did you mean "services"?); expected one of [services conntrack policy ipcache backends revnat affinity reversesk]`,
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(spec), &doc); err != nil {
			t.Fatal(err)
		}
		v, errs := eval.Build(eval.NewCompiler(nil), "p.yaml", doc.Content[0], eval.Context{Step: -1})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		got := check(v, &actions.StaticContext{})
		if (want == "") != (len(got) == 0) || (want != "" && got.Error() != want) {
			t.Errorf("%s: %v, want %q", spec, got, want)
		}
	}
}
