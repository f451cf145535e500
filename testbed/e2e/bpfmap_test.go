//go:build e2e

package e2e

// The bpfmaps reader on the test cluster: labrun, on the host, reads the
// testbed's bpffs through the path the testbed exposes (vars.yaml key
// bpffs), and what it decodes is exactly what cilium-dbg in the agent
// prints from the same maps.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/parse"
)

// holderPort is the holder's fixed source port (cca-datapath uses 40404
// in namespace cca-dp; this test must not clash with a lab run on the same
// cluster).
const holderPort = 40505

// poll calls check every interval until it reports done, and fails the test
// with what it waited for and the last state check described when timeout
// passes first. check returning an error fails at once.
func poll(tb testing.TB, what string, timeout time.Duration, check func() (done bool, state string, err error)) {
	tb.Helper()
	const interval = 100 * time.Millisecond
	deadline := time.Now().Add(timeout)
	for {
		done, state, err := check()
		if err != nil {
			tb.Fatalf("waiting for %s: %v", what, err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(interval)
	}
}

// agent runs cilium-dbg in the Cilium agent, as a lab's cilium step does
// (kube-system ds/cilium, container cilium-agent).
type agent struct {
	c   *kube.Client
	pod kube.Pod
}

func newAgent(ctx context.Context, tb testing.TB, c *kube.Client) *agent {
	tb.Helper()
	pod, err := c.ResolvePod(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium"})
	if err != nil {
		tb.Fatal(err)
	}
	return &agent{c: c, pod: pod}
}

func (a *agent) run(ctx context.Context, reuse bool, args ...string) (string, error) {
	res, err := a.c.Exec(ctx, cluster.PodTarget{Namespace: a.pod.Namespace, Pod: a.pod.Name, Container: "cilium-agent"},
		cluster.ExecRequest{Argv: append([]string{"cilium-dbg"}, args...), Reuse: reuse})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("cilium-dbg %s: exit %d: %s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	return res.Stdout, nil
}

// holderManifest completes testdata/web.yaml into the lab's datapath
// scenario: pod holder keeps one TCP connection open from source port
// holderPort to the Service's ClusterIP:80. holder is Ready only while
// its connection is established (it writes /tmp/connected after connect()).
const holderManifest = `
---
apiVersion: v1
kind: Pod
metadata: {name: holder, namespace: NS, labels: {app: holder}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: holder
    image: IMAGE
    imagePullPolicy: IfNotPresent
    readinessProbe: {exec: {command: [cat, /tmp/connected]}, periodSeconds: 1}
    command:
    - python3
    - -c
    - |
      import os, socket, time
      host = os.environ["WEB_SERVICE_HOST"]
      port = int(os.environ.get("WEB_SERVICE_PORT", "80"))
      while True:
          s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
          s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
          try:
              s.bind(("0.0.0.0", PORT))
              s.connect((host, port))
          except OSError as e:
              print(f"connect {host}:{port} from :PORT failed: {e}; retrying", flush=True)
              s.close()
              time.sleep(1)
              continue
          lip, lport = s.getsockname()
          pip, pport = s.getpeername()
          print(f"connected local={lip}:{lport} service={host}:{port} peer={pip}:{pport}", flush=True)
          open("/tmp/connected", "w").write(f"{pip}:{pport}\n")
          s.recv(1)
          os.remove("/tmp/connected")
          print("connection closed by the server; reconnecting", flush=True)
          s.close()
          time.sleep(1)
`

// scenario is what deployScenario set up.
type scenario struct {
	ns        string
	vip       string   // the Service's ClusterIP
	frontend  string   // "VIP:80/TCP", as cilium-dbg prints it
	endpoints []string // ready endpoints as ip:8080, sorted
	holder    string   // holder's ip:holderPort
}

func deployScenario(ctx context.Context, t *testing.T, c *kube.Client, image string) scenario {
	t.Helper()
	ns := kubetest.NamespaceName("e2e-bpfmap")
	web, err := os.ReadFile("testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.NewReplacer("NS", ns, "IMAGE", image, "PORT", strconv.Itoa(holderPort)).Replace(string(web) + holderManifest)
	// In order: the Service exists before holder, so kubelet gives holder
	// WEB_SERVICE_HOST/PORT.
	kubetest.ApplyInNamespace(ctx, t, c, ns, "bpfmap e2e", manifest)
	wait := func(what string, f func(context.Context) error) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := f(wctx); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	var eps []string
	wait("2 ready web pods", func(ctx context.Context) error {
		_, err := kubetest.WaitPodsReady(ctx, c, ns, "app=web", 2)
		return err
	})
	wait("2 ready endpoints of Service web", func(ctx context.Context) error {
		var err error
		eps, err = kubetest.WaitServiceEndpoints(ctx, c, ns, "web", 2)
		return err
	})
	wait("holder Ready (its connection to web's ClusterIP established)", func(ctx context.Context) error {
		_, err := kubetest.WaitPodsReady(ctx, c, ns, "app=holder", 1)
		return err
	})
	svc, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Service", Namespace: ns, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	s := scenario{ns: ns, vip: svc["spec"].(map[string]any)["clusterIP"].(string)}
	s.frontend = s.vip + ":80/TCP"
	s.holder = holder["status"].(map[string]any)["podIP"].(string) + ":" + strconv.Itoa(holderPort)
	for _, ip := range eps {
		s.endpoints = append(s.endpoints, ip+":8080")
	}
	slices.Sort(s.endpoints)
	return s
}

// TestBpfmapsMatchCiliumDbg deploys the scenario and checks that the
// bpfmaps reader, opened on the testbed's exposed bpffs from the host,
// sees the web frontend (slots resolved to ip:port) and holder's
// conntrack entries exactly as `cilium-dbg bpf lb list` and `cilium-dbg
// bpf ct list global` in the agent print them.
func TestBpfmapsMatchCiliumDbg(t *testing.T) {
	v := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r, err := bpfmaps.Open(v.BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ag := newAgent(ctx, t, c)
	s := deployScenario(ctx, t, c, v.PythonImage)
	t.Logf("namespace %s: frontend %s, endpoints %v, holder %s", s.ns, s.frontend, s.endpoints, s.holder)

	// The agent programs the services map a moment after the endpoints
	// are ready: wait until the datapath has exactly the ready endpoints.
	poll(t, "frontend "+s.frontend+" in cilium_lb4_services_v2 with the 2 ready endpoints as its backends", time.Minute,
		func() (bool, string, error) {
			fe, err := r.LookupFrontend(s.frontend)
			if err != nil || fe == nil {
				return false, fmt.Sprintf("frontend %v (error %v)", fe, err), nil
			}
			got := slices.Sorted(slices.Values(fe.ActiveBackends()))
			return fe.Count == 2 && fe.QCount == 0 && slices.Equal(got, s.endpoints),
				fmt.Sprintf("count %d qcount %d backends %v", fe.Count, fe.QCount, got), nil
		})

	t.Run("lb list", func(t *testing.T) { compareFrontend(ctx, t, r, ag, s) })
	t.Run("ct list", func(t *testing.T) { compareConntrack(ctx, t, r, ag, s) })
}

// stable reads something from the maps, runs cilium-dbg, and reads again;
// it retries (bounded) until both reads agree, so that cilium-dbg saw the
// same map contents as the reader. Other tests share the cluster, so the
// maps may change under a single read.
func stable[T any](ctx context.Context, t *testing.T, what string, read func() (T, string, error), dbg func() (string, error)) (T, string) {
	t.Helper()
	var zero T
	var last string
	for try := 1; try <= 20; try++ {
		before, key1, err := read()
		if err != nil {
			t.Fatal(err)
		}
		out, err := dbg()
		if err != nil {
			t.Fatal(err)
		}
		_, key2, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if key1 == key2 {
			return before, out
		}
		last = fmt.Sprintf("before %q, after %q", key1, key2)
		if ctx.Err() != nil {
			break
		}
	}
	t.Fatalf("%s kept changing while cilium-dbg read it (20 tries); last: %s", what, last)
	return zero, ""
}

func compareFrontend(ctx context.Context, t *testing.T, r *bpfmaps.Reader, ag *agent, s scenario) {
	fe, out := stable(ctx, t, "frontend "+s.frontend,
		func() (bpfentries.Frontend, string, error) {
			fes, err := r.Services()
			if err != nil {
				return bpfentries.Frontend{}, "", err
			}
			f := fes.Find(s.frontend)
			if f == nil {
				return bpfentries.Frontend{}, "", fmt.Errorf("frontend %s not in the services map; have %v", s.frontend, fes.Addresses())
			}
			return *f, strings.Join(slotTexts(*f), "|"), nil
		},
		func() (string, error) { return ag.run(ctx, false, "bpf", "lb", "list") })

	// The point lookup must give the same frontend as the full dump.
	if one, err := r.LookupFrontend(s.frontend); err != nil || one == nil {
		t.Errorf("LookupFrontend(%s): %v %v", s.frontend, one, err)
	} else if got, want := strings.Join(slotTexts(*one), "|"), strings.Join(slotTexts(fe), "|"); got != want {
		t.Errorf("LookupFrontend(%s) slots %q, Services() slots %q", s.frontend, got, want)
	}

	list, err := parse.ParseLBList(out)
	if err != nil {
		t.Fatal(err)
	}
	svc := list.Frontend(s.frontend)
	if !svc.Found || !svc.HasSlot0 {
		t.Fatalf("cilium-dbg bpf lb list has no %s (0) row:\n%s", s.frontend, out)
	}

	// The headline: backend slots resolved to ip:port, in slot order.
	if got, want := fe.Backends(), svc.Addrs(); !slices.Equal(got, want) {
		t.Errorf("backends: bpfmaps %v, cilium-dbg %v", got, want)
	}
	if got := slices.Sorted(slices.Values(fe.Backends())); !slices.Equal(got, s.endpoints) {
		t.Errorf("backends %v, want the Service's ready endpoints %v", got, s.endpoints)
	}
	// Slot 0: rev NAT id, type and flags.
	if int(fe.RevNATID) != svc.RevNAT || fe.Type != svc.Type || !slices.Equal(fe.FlagNames, svc.Flags) {
		t.Errorf("slot 0: bpfmaps revnat %d type %q flags %q; cilium-dbg revnat %d type %q flags %q",
			fe.RevNATID, fe.Type, fe.FlagNames, svc.RevNAT, svc.Type, svc.Flags)
	}
	// Every backend slot, field by field.
	if len(fe.Slots)-1 != len(svc.Backends) {
		t.Fatalf("bpfmaps has %d backend slots, cilium-dbg %d", len(fe.Slots)-1, len(svc.Backends))
	}
	for i, b := range svc.Backends {
		sl := fe.Slots[i+1]
		backend, protocol := printedp(b.Backend), printedp(b.BackendProtocol)
		if b.Slot == nil || sl.Slot != *b.Slot || printedp(sl.Backend) != backend || printedp(sl.Protocol) != protocol ||
			b.RevNAT == nil || int(sl.RevNATID) != *b.RevNAT || sl.Found == b.NotFound {
			t.Errorf("slot %d: bpfmaps {slot %d %v/%v revnat %d found %v}, cilium-dbg {slot %v %v/%v revnat %v notFound %v}",
				i+1, sl.Slot, printedp(sl.Backend), printedp(sl.Protocol), sl.RevNATID, sl.Found, printedp(b.Slot), backend, protocol, printedp(b.RevNAT), b.NotFound)
		}
	}
	// And the rows as printed: each slot's Text is the BACKEND ADDRESS
	// cell (the table pads it; compare without trailing blanks).
	rows := lbRows(out, s.frontend)
	for _, sl := range fe.Slots {
		key := s.frontend + " (" + strconv.Itoa(sl.Slot) + ")"
		if got, want := strings.TrimRight(sl.Text, " "), rows[key]; got != want {
			t.Errorf("row %s: bpfmaps %q, cilium-dbg %q", key, got, want)
		}
	}
	if len(rows) != len(fe.Slots) {
		t.Errorf("cilium-dbg prints %d rows for %s, bpfmaps has %d slots", len(rows), s.frontend, len(fe.Slots))
	}
	if !t.Failed() {
		t.Logf("%s [%s] revnat %d: slots %v identical in bpfmaps and cilium-dbg bpf lb list", fe.Address, fe.FlagsText, fe.RevNATID, fe.Backends())
	}
}

func slotTexts(f bpfentries.Frontend) []string {
	out := []string{}
	for _, s := range f.Slots {
		out = append(out, s.Text)
	}
	return out
}

// lbRows returns the rows of `bpf lb list` for one frontend: "ADDR (slot)"
// -> the BACKEND ADDRESS cell without trailing blanks.
func lbRows(out, frontend string) map[string]string {
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, frontend+" (")
		if !ok {
			continue
		}
		slot, value, ok := strings.Cut(rest, ")")
		if !ok {
			continue
		}
		rows[frontend+" ("+slot+")"] = strings.TrimRight(strings.TrimLeft(value, " "), " ")
	}
	return rows
}

func compareConntrack(ctx context.Context, t *testing.T, r *bpfmaps.Reader, ag *agent, s scenario) {
	// holder's connection is in the CT map once holder is Ready (it
	// connected before writing its readiness file).
	var ours bpfentries.CTEntries
	poll(t, "a TCP OUT entry of "+s.holder+" in cilium_ct4_global", 30*time.Second, func() (bool, string, error) {
		ct, err := r.Conntrack()
		if err != nil {
			return false, "", err
		}
		ours = ct.WithAddr(s.holder)
		return len(ours.InDirection("OUT")) > 0, strings.Join(ours.Lines(), "\n"), nil
	})

	ours, out := stable(ctx, t, "the CT entries of "+s.holder,
		func() (bpfentries.CTEntries, string, error) {
			ct, err := r.Conntrack()
			if err != nil {
				return nil, "", err
			}
			e := ct.WithAddr(s.holder)
			return e, strings.Join(e.Lines(), "\n"), nil
		},
		func() (string, error) { return ag.run(ctx, false, "bpf", "ct", "list", "global") })

	list, err := parse.ParseCTList(out)
	if err != nil {
		t.Fatal(err)
	}
	theirs := list.Find("", s.holder)
	if len(ours) == 0 || len(ours) != len(theirs) {
		t.Fatalf("entries of %s: bpfmaps %d, cilium-dbg %d\nbpfmaps:\n%s\ncilium-dbg:\n%s", s.holder, len(ours), len(theirs),
			strings.Join(ours.Lines(), "\n"), grepLines(out, s.holder))
	}
	byTuple := map[string]parse.CTEntry{}
	for _, e := range theirs {
		byTuple[e.Protocol+" "+e.Direction+" "+e.Src.String()+" -> "+e.Dst.String()] = e
	}
	// Lines as printed, by what precedes " expires=" (protocol, direction,
	// tuple and "related").
	printed := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if tuple, _, ok := strings.Cut(line, " expires="); ok {
			printed[tuple] = line
		}
	}
	for _, e := range ours {
		tuple := e.Protocol + " " + e.Direction + " " + e.Src + " -> " + e.Dst
		p, ok := byTuple[tuple]
		if !ok {
			t.Errorf("%s: in bpfmaps, not in cilium-dbg", tuple)
			continue
		}
		// Typed fields, through package parse.
		type fields struct {
			Expires, Packets, Bytes, LastRx, LastTx              int64
			RxSeen, TxSeen, Flags, RevNAT, SecID, Backend, NatPt int
			FlagNames                                            string
			Related                                              bool
		}
		got := fields{int64(e.Lifetime), int64(e.Packets), int64(e.Bytes), int64(e.LastRxReport), int64(e.LastTxReport),
			int(e.RxFlagsSeen), int(e.TxFlagsSeen), int(e.Flags), int(e.RevNAT), int(e.SourceSecurityID), int(e.BackendID), int(e.NatPort),
			strings.Join(e.FlagNames, " "), e.Related}
		// Cilium 1.20 prints BackendID and NatPort; -1 shows one missing.
		backendID, natPort := -1, -1
		if p.BackendID != nil {
			backendID = int(*p.BackendID)
		}
		if p.NatPort != nil {
			natPort = *p.NatPort
		}
		want := fields{p.Expires, p.Packets, p.Bytes, p.LastRxReport, p.LastTxReport,
			p.RxFlagsSeen, p.TxFlagsSeen, p.Flags, p.RevNAT, p.SourceSecurityID, backendID, natPort,
			strings.Join(p.FlagNames, " "), p.Related}
		if got != want {
			t.Errorf("%s:\n bpfmaps    %+v\n cilium-dbg %+v", tuple, got, want)
		}
		// And the line as printed, byte for byte.
		head, _, _ := strings.Cut(e.Line, " expires=")
		if line := printed[head]; line != e.Line {
			t.Errorf("%s: line differs:\n bpfmaps    %q\n cilium-dbg %q", tuple, e.Line, line)
		}
	}

	// What the lab teaches, read from the maps: socket LB translated
	// holder's connect() to a backend, so CT has holder -> backend:8080
	// and no SVC entry for the ClusterIP. An earlier connection from the
	// same port can linger until its entry expires (a clean-clone run saw
	// 8), so every OUT entry must go to a backend, never to the ClusterIP,
	// and there must be at least one.
	out1 := ours.InDirection("OUT")
	if len(out1) == 0 {
		t.Errorf("no OUT entry of %s; want its connection to one of %v", s.holder, s.endpoints)
	}
	for _, e := range out1 {
		if !slices.Contains(s.endpoints, e.Dst) {
			t.Errorf("OUT entry of %s to %s, which is not one of the backends %v: %s", s.holder, e.Dst, s.endpoints, e.Line)
		}
	}
	if svc := ours.InDirection("SVC"); len(svc) != 0 {
		t.Errorf("SVC entries for %s: %q; want none (socket LB)", s.holder, svc.Lines())
	}
	if !t.Failed() {
		for _, e := range ours {
			t.Logf("identical in bpfmaps and cilium-dbg bpf ct list global: %s", e.Line)
		}
	}
}

func grepLines(out, substr string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, substr) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// BenchmarkBpfmapsLiveConntrack reads the testbed's live conntrack table
// (cilium_ct4_global + cilium_ct_any4_global) each iteration three ways:
// with the bpfmaps reader from the host, with `cilium-dbg bpf ct list
// global` in the agent through a new exec each time plus parse.ParseCTList,
// and the same through labrun's shared shell session (what the cilium
// action uses). It reports each per-op time and how many times faster
// bpfmaps is (x-vs-exec, x-vs-session).
func BenchmarkBpfmapsLiveConntrack(b *testing.B) {
	v := kubetest.ReadVars(b)
	c := kubetest.Connect(b)
	ctx := context.Background()
	r, err := bpfmaps.Open(v.BPFFS)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ag := newAgent(ctx, b, c)
	dbg := func(reuse bool) (int, time.Duration) {
		start := time.Now()
		out, err := ag.run(ctx, reuse, "bpf", "ct", "list", "global")
		if err != nil {
			b.Fatal(err)
		}
		l, err := parse.ParseCTList(out)
		if err != nil {
			b.Fatal(err)
		}
		return len(l.Entries), time.Since(start)
	}
	dbg(true) // open the session outside the timings
	var tMaps, tExec, tSession time.Duration
	var nMaps, nExec int
	n := 0
	for b.Loop() {
		start := time.Now()
		ct, err := r.Conntrack()
		if err != nil {
			b.Fatal(err)
		}
		tMaps += time.Since(start)
		nMaps = len(ct)
		var d time.Duration
		nExec, d = dbg(false)
		tExec += d
		_, d = dbg(true)
		tSession += d
		n++
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	b.ReportMetric(0, "ns/op") // the sum of three ways means nothing
	b.ReportMetric(float64(nMaps), "entries")
	b.ReportMetric(per(tMaps), "bpfmaps-us/op")
	b.ReportMetric(per(tExec), "exec-us/op")
	b.ReportMetric(per(tSession), "session-us/op")
	b.ReportMetric(float64(tExec)/float64(tMaps), "x-vs-exec")
	b.ReportMetric(float64(tSession)/float64(tMaps), "x-vs-session")
	b.Logf("%d iterations: %d CT entries via bpfmaps in %.0f µs, %d via cilium-dbg exec+parse in %.0f µs (%.0fx), via session in %.0f µs (%.0fx)",
		n, nMaps, per(tMaps), nExec, per(tExec), float64(tExec)/float64(tMaps), per(tSession), float64(tSession)/float64(tMaps))
}
