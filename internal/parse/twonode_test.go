package parse

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// twoNodeCapture is one run of testbed/examples/capture-twonode.sh on a
// two-node profile: pod web (python http.server on 8080) on node 2,
// NodePort Service web, pod client on node 1. The values are that run's,
// as its kubectl captures beside the agents' output show them.
type twoNodeCapture struct {
	dir                   string // under testdata/real
	webIP, clientIP       string
	webEndpoint, webIdent int // web's endpoint id and identity on node 2
	nodePort              int
	network, tunnel       any    // status --verbose Routing: Network and its tunnel (nil: none)
	node1IP, node2IP      string // the nodes' InternalIPs
	// webTunnelEndpoint is what node 1's ipcache records for web's IP:
	// node 2's InternalIP in tunnel mode.
	webTunnelEndpoint string
}

var twoNodeCaptures = []twoNodeCapture{
	{dir: "tunnel", webIP: "10.42.1.214", clientIP: "10.42.0.232", webEndpoint: 3173, webIdent: 56373, nodePort: 30641, network: "Tunnel", tunnel: "vxlan",
		node1IP: "10.250.42.2", node2IP: "10.250.42.3", webTunnelEndpoint: "10.250.42.3"},
	// Native routing: node 1's ipcache still records node 2 as the tunnel
	// endpoint of its pods (flag hastunnel), as Cilium 1.20.1 printed it.
	{dir: "native", webIP: "10.42.1.222", clientIP: "10.42.0.199", webEndpoint: 341, webIdent: 63018, nodePort: 32005, network: "Native", tunnel: nil,
		node1IP: "10.250.42.2", node2IP: "10.250.42.3", webTunnelEndpoint: "10.250.42.3"},
}

// Both agents' captures of each two-node profile, parsed: what each
// agent's endpoint list, service list and bpf lb list say of web, that the
// agents agree, and the routing status --verbose reports.
func TestTwoNodeCaptures(t *testing.T) {
	for _, c := range twoNodeCaptures {
		t.Run(c.dir, func(t *testing.T) {
			file := func(node int, what string) string {
				return input(t, fmt.Sprintf("real/%s/node%d_cilium-dbg_%s.txt", c.dir, node, what))
			}
			web := fmt.Sprintf("%s:8080", c.webIP)
			eps2, err := ParseEndpointList(file(2, "endpoint_list"))
			if err != nil {
				t.Fatal(err)
			}
			e := eps2.ByIPv4(c.webIP)
			if e.ID != c.webEndpoint || deref(e.Identity) != c.webIdent || !e.HasLabel("k8s:app=web") || !e.HasLabel("k8s:io.kubernetes.pod.namespace=capture-2n") || e.Status != "ready" {
				t.Errorf("node 2's endpoint list: web is %+v", e)
			}
			eps1, err := ParseEndpointList(file(1, "endpoint_list"))
			if err != nil {
				t.Fatal(err)
			}
			if e := eps1.ByIPv4(c.webIP); e.ID != 0 {
				t.Errorf("node 1's endpoint list has web, a pod of node 2: %+v", e)
			}
			if e := eps1.ByIPv4(c.clientIP); e.ID == 0 || !e.HasLabel("k8s:io.kubernetes.pod.namespace=capture-2n") {
				t.Errorf("node 1's endpoint list: client is %+v", e)
			}
			// Node 1's ipcache: web (a pod of node 2) with its identity and
			// tunnel endpoint, node 1 itself as host (1), node 2 as
			// remote-node (6), everything else as world (2).
			ipc, err := ParseIPCacheList(file(1, "bpf_ipcache_list"))
			if err != nil {
				t.Fatal(err)
			}
			if e := ipc.Lookup(c.webIP); e == nil || int(e.Identity) != c.webIdent || e.TunnelEndpoint != c.webTunnelEndpoint {
				t.Errorf("node 1's ipcache: web %s is %+v, want identity %d tunnel endpoint %s", c.webIP, e, c.webIdent, c.webTunnelEndpoint)
			}
			for ip, want := range map[string]int{c.node1IP: 1, c.node2IP: 6, "192.0.2.1": 2} {
				if got := ipc.IdentityOf(ip); got != want {
					t.Errorf("node 1's ipcache: %s has identity %d, want %d", ip, got, want)
				}
			}
			for node := 1; node <= 2; node++ {
				svcs, err := ParseServiceList(file(node, "service_list"))
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, s := range svcs {
					if s.Type == "NodePort" && s.Frontend.IP == "0.0.0.0" && s.Frontend.Port == c.nodePort {
						found = true
						if len(s.Backends) != 1 || s.Backends[0].IP != c.webIP || s.Backends[0].Port != 8080 || s.Backends[0].State != "active" {
							t.Errorf("node %d's service list: NodePort %d has backends %v, want %s", node, c.nodePort, s.Backends, web)
						}
					}
				}
				if !found {
					t.Errorf("node %d's service list has no NodePort 0.0.0.0:%d", node, c.nodePort)
				}
				lb, err := ParseLBList(file(node, "bpf_lb_list"))
				if err != nil {
					t.Fatal(err)
				}
				if got := lb.Backends(fmt.Sprintf("0.0.0.0:%d/TCP", c.nodePort)); !slices.Equal(got, []string{web + "/TCP"}) && !slices.Equal(got, []string{web}) {
					t.Errorf("node %d's bpf lb list: NodePort backends %v, want %s", node, got, web)
				}
				st, err := ParseStatus(file(node, "status_verbose"))
				if err != nil {
					t.Fatal(err)
				}
				if deref(st.Routing.Network) != c.network || deref(st.Routing.TunnelProtocol) != c.tunnel {
					t.Errorf("node %d's status --verbose: routing %+v, want network %v tunnel %v", node, st.Routing, c.network, c.tunnel)
				}
			}
		})
	}
}

// TestTwoNodeAgentAPI reads what each agent of a tunnel testbed served on
// its API socket right after cilium-dbg printed its tables (one run of
// capture-twonode.sh: web on node 2 at 10.42.1.38, client on node 1 at
// 10.42.0.136), as cca-identity and cca-services read node 1's agent: the
// endpoint document gives every row of endpoint list (id, identity,
// labels, IPv4, state), ByIPv4 finds web on node 2 only, the status
// document gives the routing, kube-proxy replacement and attach mode the
// table prints, and the identity list (GET /v1/identity, as identity list
// -o json) holds every identity the endpoints have, the reserved ones
// among them.
func TestTwoNodeAgentAPI(t *testing.T) {
	file := func(node int, what string) string {
		return input(t, fmt.Sprintf("real/tunnel-api/node%d_%s.txt", node, what))
	}
	for node := 1; node <= 2; node++ {
		t.Run(fmt.Sprint("node", node), func(t *testing.T) {
			api, err := ParseEndpointGet(file(node, "agent_api_endpoint"))
			if err != nil {
				t.Fatal(err)
			}
			table, err := ParseEndpointList(file(node, "cilium-dbg_endpoint_list"))
			if err != nil {
				t.Fatal(err)
			}
			if len(api) != len(table) || len(api) == 0 {
				t.Fatalf("%d endpoints in the document, %d rows in the table", len(api), len(table))
			}
			for _, row := range table {
				e := api.ID(row.ID)
				labels := slices.Clone(e.Labels)
				slices.Sort(labels)
				want := slices.Clone(row.Labels)
				slices.Sort(want)
				if deref(e.Identity) != deref(row.Identity) || deref(e.Networking.IPv4) != deref(row.IPv4) || e.State != row.Status || !slices.Equal(labels, want) {
					t.Errorf("endpoint %d: document id %d identity %v ipv4 %v state %q labels %v; table identity %v ipv4 %v status %q labels %v",
						row.ID, e.ID, deref(e.Identity), deref(e.Networking.IPv4), e.State, labels, deref(row.Identity), deref(row.IPv4), row.Status, want)
				}
				if row.IPv4 != nil && api.ByIPv4(*row.IPv4).ID != row.ID {
					t.Errorf("ByIPv4(%s) = endpoint %d, want %d", *row.IPv4, api.ByIPv4(*row.IPv4).ID, row.ID)
				}
			}
			web := api.ByIPv4("10.42.1.38")
			if (node == 2) != (web.ID != 0) || (node == 2 && !slices.Contains(web.Labels, "k8s:app=web")) {
				t.Errorf("web (a pod of node 2) in node %d's endpoint document: %+v", node, web)
			}
			st, err := ParseStatus(file(node, "agent_api_healthz"))
			if err != nil {
				t.Fatal(err)
			}
			text, err := ParseStatus(file(node, "cilium-dbg_status_verbose"))
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "routing", st.Routing, text.Routing)
			eq(t, "routing network", []any{deref(st.Routing.Network), deref(st.Routing.TunnelProtocol)}, []any{"Tunnel", "vxlan"})
			eq(t, "masquerading", st.Masquerading, text.Masquerading)
			eq(t, "configured device mode", st.DeviceModeConfigured, text.DeviceModeConfigured)
			eq(t, "KubeProxyReplacement", st.KubeProxyReplacement, text.KubeProxyReplacement)
			eq(t, "KPR mode", st.KubeProxyReplacementDetails.Mode, text.KubeProxyReplacementDetails.Mode)
			eq(t, "socket LB", st.KubeProxyReplacementDetails.SocketLB, text.KubeProxyReplacementDetails.SocketLB)
			eq(t, "services", st.KubeProxyReplacementDetails.Services, text.KubeProxyReplacementDetails.Services)
			eq(t, "attach mode", st.AttachMode, text.AttachMode)
			var ids []struct {
				ID     int      `json:"id"`
				Labels []string `json:"labels"`
			}
			if err := json.Unmarshal([]byte(file(node, "agent_api_identity")), &ids); err != nil {
				t.Fatal(err)
			}
			known := map[int]bool{}
			for _, id := range ids {
				known[id.ID] = true
			}
			for _, e := range api {
				if e.Identity == nil || !known[*e.Identity] {
					t.Errorf("endpoint %d's identity %v is not in the identity list", e.ID, deref(e.Identity))
				}
			}
			for _, reserved := range []int{1, 2, 4} { // host, world, health
				if !known[reserved] {
					t.Errorf("reserved identity %d is not in the identity list", reserved)
				}
			}
		})
	}
}
