//go:build e2e

package e2e

// The bpfmap reader against the bytes: for every map kind the bpfmap
// action reads, on both nodes, each entry labrun reports decodes from
// exactly the key and value bytes `bpftool map dump pinned PATH -j`
// printed for it, each field from the bytes that hold it (or from the
// entry another map holds for it, as a slot's backend), no entry is
// invented and none that stayed in the map is lost.
//
// The maps change while they are read (conntrack, affinity and the
// socket reverse NAT map on a busy node; the services of other tests):
// each round dumps the maps with bpftool, reads them with labrun, and
// dumps them again. An entry labrun reports must be in one of the two
// dumps with every field as that dump's bytes say; an entry both dumps
// hold with the same bytes must be in labrun's. A round that disagrees
// on values (an entry whose bytes changed in between, one that came or
// went) is read again, up to 5 times; a field labrun gives that no byte
// holds is a finding in any round.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// rec is an entry as a set of fields, by their JSON names: a number as
// json.Number, a string, a bool or nil. A field the bytes do not hold is
// absent from a decoded rec.
type rec map[string]any

// dump is one pinned map as bpftool printed it: its entries' value bytes
// by the hex of their key bytes.
type dump map[string][]byte

// dumps are the maps of one round, by name.
type dumps map[string]dump

// bytesCheck is how one map kind of the bpfmap action is checked.
type bytesCheck struct {
	kind string   // the bpfmap action's map key
	maps []string // the pinned maps its entries come from
	// derived are the fields labrun computes from fields the bytes hold
	// (a name list, a text cilium-dbg prints), not checked here.
	derived []string
	// decode gives, from the bytes of a round, every entry's fields that
	// bytes hold, keyed by key.
	decode func(d dumps) map[string]rec
	// read is what labrun's reader gives, keyed the same way.
	read func() (map[string]rec, error)
}

func TestBpfmapEntriesAreTheBytesBpftoolDumps(t *testing.T) {
	v := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Session affinity and socket LB entries of this test's own: web and
	// holder (holder's connect() makes a reverse_sk entry), a Service
	// with sessionAffinity ClientIP that each node's shell asks (an
	// affinity entry keyed by the node's network namespace cookie), and
	// its NodePort asked from outside the cluster (keyed by client IP).
	s := deployScenario(ctx, t, c, v.PythonImage)
	kubetest.ApplyInNamespace(ctx, t, c, s.ns, "sticky", strings.ReplaceAll(stickyService, "NS", s.ns))
	svc := get(ctx, t, c, "Service", s.ns, "sticky")
	stickyIP := str(t, svc, "spec", "clusterIP")
	np := nodePort(ctx, t, c, s.ns, "sticky")
	nodes := []struct {
		name, bpffs, ip string
	}{{v.NodeName, v.BPFFS, v.NodeIP}}
	if v.Node2Name != "" {
		nodes = append(nodes, struct{ name, bpffs, ip string }{v.Node2Name, v.Node2BPFFS, v.Node2IP})
	}
	for i, n := range nodes {
		poll(t, "the node's shell reaching sticky "+stickyIP+":80", time.Minute, func() (bool, string, error) {
			out, _, err := onNodeN(i+1, "curl", "-s", "-o", "/dev/null", "-m", "3", "-w", "%{http_code}", "http://"+stickyIP+":80/")
			return err == nil && out == "200", out, nil
		})
		if v.OutsideIP != "" {
			if code, _ := outsideGet(t, fmt.Sprintf("http://%s:%d/", n.ip, np), time.Minute); code != "200" {
				t.Fatalf("sticky's NodePort %d on %s answered %q from outside", np, n.ip, code)
			}
		}
	}

	for i, n := range nodes {
		t.Run(n.name, func(t *testing.T) {
			r, err := bpfmaps.Open(n.bpffs)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			eps, err := r.PolicyEndpoints()
			if err != nil || len(eps) == 0 {
				t.Fatalf("policy maps of %s: %v, %v", n.name, eps, err)
			}
			checks := bpfmapChecks(r, eps)
			for _, ch := range checks {
				t.Run(ch.kind, func(t *testing.T) { checkBytes(ctx, t, i+1, ch) })
			}
		})
	}
}

// stickyService is a Service on web with session affinity by client IP,
// reachable from outside through its NodePort.
const stickyService = `
apiVersion: v1
kind: Service
metadata: {name: sticky, namespace: NS}
spec:
  type: NodePort
  selector: {app: web}
  sessionAffinity: ClientIP
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
`

// checkBytes runs rounds of bpftool dump, labrun read, bpftool dump until
// one agrees on every value (at most 5), and reports what the last round
// found; a field no byte holds is reported whatever the round.
func checkBytes(ctx context.Context, t *testing.T, node int, ch bytesCheck) {
	var backed, changing []string
	entries := 0
	for round := 1; round <= 5 && ctx.Err() == nil; round++ {
		d1 := dumpMaps(t, node, ch.maps)
		got, err := ch.read()
		if err != nil {
			t.Fatal(err)
		}
		d2 := dumpMaps(t, node, ch.maps)
		backed, changing = compareBytes(ch, ch.decode(d1), ch.decode(d2), got)
		entries = len(got)
		if len(changing) == 0 {
			break
		}
		t.Logf("round %d: %d entries changed between the reads; reading again", round, len(changing))
	}
	for _, f := range backed {
		t.Error(f)
	}
	for _, f := range changing {
		t.Errorf("in every round: %s", f)
	}
	t.Logf("%d entries of %s checked", entries, strings.Join(ch.maps, ", "))
}

// compareBytes compares labrun's entries with two rounds of decoded
// bytes. backed are the fields labrun gives that no byte holds; changing
// are the disagreements a change of the map between the reads explains.
func compareBytes(ch bytesCheck, e1, e2, got map[string]rec) (backed, changing []string) {
	unbacked := map[string][]string{} // "field is value": the entries
	for k, lr := range got {
		r1, ok1 := e1[k]
		r2, ok2 := e2[k]
		if !ok1 && !ok2 {
			changing = append(changing, fmt.Sprintf("%s entry %s is in neither bpftool dump", ch.kind, k))
			continue
		}
		for _, f := range sortedKeys(lr) {
			v := lr[f]
			if slices.Contains(ch.derived, f) {
				continue
			}
			_, in1 := r1[f]
			_, in2 := r2[f]
			if !in1 && !in2 {
				if v != nil && (ok1 || ok2) {
					unbacked[f+" is "+show(v)] = append(unbacked[f+" is "+show(v)], k)
				}
				continue
			}
			if ok1 && equalJSON(r1[f], v) || ok2 && equalJSON(r2[f], v) {
				continue
			}
			changing = append(changing, fmt.Sprintf("%s entry %s: %s is %v, the bytes say %v (first dump) and %v (second)", ch.kind, k, f, show(v), show(r1[f]), show(r2[f])))
		}
	}
	for k, r1 := range e1 {
		if r2, ok := e2[k]; ok && equalJSON(map[string]any(r1), map[string]any(r2)) {
			if _, ok := got[k]; !ok {
				changing = append(changing, fmt.Sprintf("%s entry %s is in both bpftool dumps, unchanged, and not in labrun's", ch.kind, k))
			}
		}
	}
	for what, keys := range unbacked {
		sort.Strings(keys)
		backed = append(backed, fmt.Sprintf("%s: %s in %d entries (%s first), and no byte of an entry holds it", ch.kind, what, len(keys), keys[0]))
	}
	sort.Strings(backed)
	sort.Strings(changing)
	return backed, changing
}

// dumpMaps dumps each map with bpftool on the node.
func dumpMaps(t *testing.T, node int, names []string) dumps {
	t.Helper()
	out := dumps{}
	for _, name := range names {
		if _, done := out[name]; done {
			continue
		}
		text, _, err := onNodeN(node, "bpftool", "map", "dump", "pinned", "/sys/fs/bpf/tc/globals/"+name, "-j")
		if err != nil {
			t.Fatal(err)
		}
		var raw []struct {
			Key   []string `json:"key"`
			Value []string `json:"value"`
		}
		if err := json.Unmarshal([]byte(text), &raw); err != nil {
			t.Fatalf("bpftool map dump pinned %s -j: %v", name, err)
		}
		d := dump{}
		for _, e := range raw {
			d[hexKey(hexBytes(t, e.Key))] = hexBytes(t, e.Value)
		}
		out[name] = d
	}
	return out
}

// hexBytes reads bpftool's ["0x0a", "0x2b", ...].
func hexBytes(t *testing.T, words []string) []byte {
	t.Helper()
	b := make([]byte, len(words))
	for i, w := range words {
		n, err := strconv.ParseUint(strings.TrimPrefix(w, "0x"), 16, 8)
		if err != nil {
			t.Fatalf("bpftool printed %q as a byte", w)
		}
		b[i] = byte(n)
	}
	return b
}

func hexKey(b []byte) string { return fmt.Sprintf("%x", b) }

// each calls f for every entry of d, its key bytes decoded from hex.
func each(d dump, f func(k, v []byte)) {
	for hk, v := range d {
		var k []byte
		fmt.Sscanf(hk, "%x", &k)
		f(k, v)
	}
}

// records turns labrun's entries into recs keyed by key.
func records[T any](entries []T, key func(rec) string) map[string]rec {
	out := map[string]rec{}
	for _, e := range entries {
		r := toRec(e)
		out[key(r)] = r
	}
	return out
}

// toRec is v's fields as its JSON has them.
func toRec(v any) rec {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var r rec
	if err := d.Decode(&r); err != nil {
		panic(err)
	}
	return r
}

func num[T ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~int](n T) json.Number {
	return json.Number(strconv.FormatUint(uint64(n), 10))
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys(r rec) []string {
	ks := make([]string, 0, len(r))
	for k := range r {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// keyOf joins the fields of r that identify an entry.
func keyOf(r rec, fields ...string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprint(r[f])
	}
	return strings.Join(parts, " ")
}
