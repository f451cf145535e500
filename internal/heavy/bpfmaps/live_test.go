package bpfmaps

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// TestLiveBPFFS reads a real Cilium's pinned maps, read-only, when
// LABRUN_LIVE_BPFFS names its bpffs root (for the testbed, the host's
// read-only view of its bpffs, key bpffs of its vars.yaml:
// LABRUN_LIVE_BPFFS=/var/lib/labrun-testbed/bpffs). It checks
// that every map opens with the expected layout and logs what it decoded.
// The maps are opened with BPF_F_RDONLY: this test cannot write to them.
//
// Optional, to compare with cilium-dbg run at about the same time:
//   - LABRUN_LIVE_LBLIST: output of `cilium-dbg bpf lb list -o json`;
//     compared exactly with Frontends.LBList() (IPv4 rows);
//   - LABRUN_LIVE_CTLIST: output of `cilium-dbg bpf ct list global`; every
//     tuple it lists that is still in our dump must print the same line,
//     modulo counters that moved in between (digits are masked).
func TestLiveBPFFS(t *testing.T) {
	root := os.Getenv("LABRUN_LIVE_BPFFS")
	if root == "" {
		t.Skip("set LABRUN_LIVE_BPFFS to a live Cilium bpffs root to run")
	}
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	start := time.Now()
	fes, err := r.Services()
	if err != nil {
		t.Fatalf("services: %v", err)
	}
	t.Logf("%d frontends in %v", len(fes), time.Since(start))
	for _, f := range fes {
		t.Logf("  %-28s %-40s revnat=%d(%s) count=%d/%d backends=%v",
			f.Address, "["+f.FlagsText+"]", f.RevNATID, js(f.RevNAT), f.Count, f.QCount, f.Backends())
		for _, s := range f.Slots {
			if !s.Found {
				t.Errorf("  %s slot %d: %s", f.Address, s.Slot, s.Text)
			}
		}
	}

	if f := os.Getenv("LABRUN_LIVE_LBLIST"); f != "" {
		compareLBList(t, f, fes)
	}

	start = time.Now()
	ct, err := r.Conntrack()
	if err != nil {
		t.Fatalf("conntrack: %v", err)
	}
	t.Logf("%d CT entries in %v", len(ct), time.Since(start))
	for i, e := range ct {
		if i == 40 {
			t.Logf("  ...")
			break
		}
		t.Logf("  %s", e.Line)
	}

	if f := os.Getenv("LABRUN_LIVE_CTLIST"); f != "" {
		compareCTList(t, f, ct)
	}

	ipc, err := r.IPCache()
	if err != nil {
		t.Fatalf("ipcache: %v", err)
	}
	t.Logf("%d ipcache entries", len(ipc))
	for _, e := range ipc {
		t.Logf("  %-24s %s", e.Prefix, e.Value)
	}

	aff, err := r.Affinity()
	if err != nil {
		t.Fatalf("affinity: %v", err)
	}
	t.Logf("%d session affinity entries", len(aff))
	for _, a := range aff {
		t.Logf("  service %d (%s) client ip %s cookie %s -> backend %d (%s)", a.RevNATID, js(a.Service), js(a.ClientIP), js(a.ClientCookie), a.BackendID, js(a.Backend))
	}
	rsk, err := r.SockRevNAT()
	if err != nil {
		t.Fatalf("reverse_sk: %v", err)
	}
	t.Logf("%d socket reverse NAT entries", len(rsk))
	for _, s := range rsk {
		t.Logf("  socket %d: %s stands for %s (service %d)", s.Cookie, s.Backend, s.Frontend, s.RevNATID)
	}

	eps, err := r.PolicyEndpoints()
	if err != nil {
		t.Fatalf("policy endpoints: %v", err)
	}
	t.Logf("policy maps for endpoints %v", eps)
	for _, ep := range eps {
		ps, err := r.Policy(ep)
		if err != nil {
			t.Errorf("policy %d: %v", ep, err)
			continue
		}
		var rows []string
		for _, p := range ps {
			rows = append(rows, p.Verdict+" "+p.Direction+" "+strconv.Itoa(int(p.Identity))+" "+p.PortProto)
		}
		t.Logf("  endpoint %d: %d entries: %s", ep, len(ps), strings.Join(rows, "; "))
	}
}

func compareLBList(t *testing.T, file string, fes bpfentries.Frontends) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var theirs map[string][]string
	if err := json.Unmarshal(data, &theirs); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ours := fes.LBList()
	same, diff := 0, 0
	keys := []string{}
	for k := range theirs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "[") { // IPv6 rows: not read by this package
			continue
		}
		if strings.Join(ours[k], "|") == strings.Join(theirs[k], "|") {
			same++
			continue
		}
		diff++
		t.Errorf("lb list %q: cilium-dbg %q, bpfmaps %q", k, theirs[k], ours[k])
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			diff++
			t.Errorf("lb list %q only in bpfmaps: %q", k, ours[k])
		}
	}
	t.Logf("lb list vs cilium-dbg: %d rows identical, %d different", same, diff)
}

var digits = regexp.MustCompile(`[0-9]+`)

func compareCTList(t *testing.T, file string, ct bpfentries.CTEntries) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{}
	for _, e := range ct {
		tuple, _, _ := strings.Cut(e.Line, "expires=")
		ours[tuple] = e.Line
	}
	exact, masked, gone := 0, 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		tuple, _, _ := strings.Cut(line, "expires=")
		our, ok := ours[tuple]
		switch {
		case !ok:
			gone++ // flow ended between the two reads
		case our == line:
			exact++
		case digits.ReplaceAllString(our, "#") == digits.ReplaceAllString(line, "#"):
			masked++
		default:
			t.Errorf("ct line differs:\n cilium-dbg %q\n bpfmaps    %q", line, our)
		}
	}
	t.Logf("ct list vs cilium-dbg: %d lines identical, %d identical but for moving counters, %d gone in between", exact, masked, gone)
	if exact+masked == 0 {
		t.Errorf("no cilium-dbg CT line found in the dump")
	}
}
