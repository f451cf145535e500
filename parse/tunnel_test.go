package parse

import (
	"slices"
	"testing"
)

// The two-node tunnel profile's captures (testbed/examples/capture-twonode.sh:
// pod web on node 2 at 10.42.1.214, NodePort Service web 30641 -> 8080,
// pod client on node 1), parsed from both agents: what each agent's
// endpoint list, service list and bpf lb list say of web, and that the
// agents agree.
func TestTunnelCaptures(t *testing.T) {
	const webIP, nodePort = "10.42.1.214", 30641
	web := webIP + ":8080"
	eps2, err := ParseEndpointList(input(t, "real/tunnel/node2_cilium-dbg_endpoint_list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := eps2.ByIPv4(webIP)
	if e.ID != 3173 || e.Identity != 56373 || !e.HasLabel("k8s:app=web") || !e.HasLabel("k8s:io.kubernetes.pod.namespace=capture-2n") || e.Status != "ready" {
		t.Errorf("node 2's endpoint list: web is %+v", e)
	}
	eps1, err := ParseEndpointList(input(t, "real/tunnel/node1_cilium-dbg_endpoint_list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if e := eps1.ByIPv4(webIP); e.ID != 0 {
		t.Errorf("node 1's endpoint list has web, a pod of node 2: %+v", e)
	}
	if e := eps1.ByIPv4("10.42.0.232"); e.ID == 0 || !e.HasLabel("k8s:io.kubernetes.pod.namespace=capture-2n") {
		t.Errorf("node 1's endpoint list: client is %+v", e)
	}
	for n := 1; n <= 2; n++ {
		node := []string{"", "node1", "node2"}[n]
		svcs, err := ParseServiceList(input(t, "real/tunnel/"+node+"_cilium-dbg_service_list.txt"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range svcs {
			if s.Type == "NodePort" && s.Frontend.IP == "0.0.0.0" && s.Frontend.Port == nodePort {
				found = true
				if len(s.Backends) != 1 || s.Backends[0].IP != webIP || s.Backends[0].Port != 8080 || s.Backends[0].State != "active" {
					t.Errorf("%s's service list: NodePort %d has backends %v, want %s", node, nodePort, s.Backends, web)
				}
			}
		}
		if !found {
			t.Errorf("%s's service list has no NodePort 0.0.0.0:%d", node, nodePort)
		}
		lb, err := ParseLBList(input(t, "real/tunnel/"+node+"_cilium-dbg_bpf_lb_list.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := lb.Backends("0.0.0.0:30641/TCP"); !slices.Equal(got, []string{web + "/TCP"}) && !slices.Equal(got, []string{web}) {
			t.Errorf("%s's bpf lb list: NodePort backends %v, want %s", node, got, web)
		}
	}
}
