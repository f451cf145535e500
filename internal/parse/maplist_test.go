package parse

import (
	"strings"
	"testing"
)

func TestMapList(t *testing.T) {
	l, err := ParseMapList(input(t, "synthetic/cilium-map-list/v1.20.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 10)
	eq(t, "policy map", l.Get("cilium_policy_v3_01234"), MapInfo{Name: "cilium_policy_v3_01234", Entries: ptr(4), EntriesKnown: true, CacheEnabled: true})
	eq(t, "unknown entries", l.Get("cilium_lb4_services_v2"), MapInfo{Name: "cilium_lb4_services_v2"})
	eq(t, "errors", l.Get("cilium_ipcache_v2").Errors, 1)
	eq(t, "PolicyMap v3 padded", l.PolicyMap(1234), "cilium_policy_v3_01234")
	eq(t, "PolicyMap missing", l.PolicyMap(9), "")
	eq(t, "Names", l.Names("cilium_lb4_"), []string{"cilium_lb4_services_v2", "cilium_lb4_backends_v3", "cilium_lb4_reverse_nat"})
}

func TestMapListOlderPolicyNames(t *testing.T) {
	for _, c := range []struct{ name string }{{"cilium_policy_v2_03978"}, {"cilium_policy_03978"}, {"cilium_policy_v3_3978"}} {
		l, err := ParseMapList("Name   Num entries   Num errors   Cache enabled\n" + c.name + "   3   0   true\n")
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "PolicyMap("+c.name+")", l.PolicyMap(3978), c.name)
	}
}

func TestMapListErrors(t *testing.T) {
	_, err := ParseMapList("")
	wantError(t, err, kindMapList, 0, "empty input")
	head := "Name                     Num entries   Num errors   Cache enabled\n"
	_, err = ParseMapList(head + "cilium_x                 many          0            true\n")
	wantError(t, err, kindMapList, 2, "Num entries")
	_, err = ParseMapList(head + "cilium_x                 1             0            maybe\n")
	wantError(t, err, kindMapList, 2, "Cache enabled")
}

// The JSON document (map list -o json, GET /v1/map) gives the rows the
// table prints from it: null cache is "unknown", [] is 0 entries, null
// elements are not entries, a last-error counts as an error.
func TestMapListJSON(t *testing.T) {
	l, err := ParseMapList(`{"maps":[
	  {"cache":null,"path":"/sys/fs/bpf/tc/globals/cilium_lb4_services_v2"},
	  {"cache":[],"path":"/sys/fs/bpf/tc/globals/cilium_lb4_source_range"},
	  {"cache":[{"key":"a","value":"b"},null,{"key":"c","last-error":"EEXIST"}],"path":"/sys/fs/bpf/tc/globals/cilium_policy_v3_00042"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "rows", l, MapList{
		{Name: "cilium_lb4_services_v2"},
		{Name: "cilium_lb4_source_range", Entries: ptr(0), EntriesKnown: true, CacheEnabled: true},
		{Name: "cilium_policy_v3_00042", Entries: ptr(2), EntriesKnown: true, Errors: 1, CacheEnabled: true},
	})
	eq(t, "PolicyMap", l.PolicyMap(42), "cilium_policy_v3_00042")
	for _, c := range []struct{ name, in, want string }{
		{"no maps key", `{"other":[]}`, `no "maps" list`},
		{"no path", `{"maps":[{"cache":[]}]}`, "map 0: no path"},
		{"cut", `{"maps":[{"cache":[],"path":"/a`, ""},
	} {
		if _, err := ParseMapList(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
