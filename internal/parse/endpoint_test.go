package parse

import "testing"

func TestEndpointGetHolder(t *testing.T) {
	l, err := ParseEndpointGet(input(t, "synthetic/cilium-endpoint-get/v1.20-holder.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 1)
	e := l[0]
	eq(t, "id", e.ID, 1234)
	eq(t, "state", e.State, "ready")
	eq(t, "interface", e.Networking.InterfaceName, "lxc3a6f7d4e8c73")
	eq(t, "ifindex", e.Networking.InterfaceIndex, 26)
	eq(t, "container if", deref(e.Networking.ContainerInterfaceName), "eth0")
	eq(t, "mac", e.Networking.Mac, "ae:41:0f:7c:2d:90")
	eq(t, "host mac", e.Networking.HostMac, "5a:3c:8e:21:9b:44")
	eq(t, "ipv4", deref(e.Networking.IPv4), "10.42.0.40")
	eq(t, "no ipv6", e.Networking.IPv6, (*string)(nil))
	eq(t, "addressing", e.Networking.Addressing, []EndpointAddress{{IPv4: ptr("10.42.0.40"), IPv4PoolName: ptr("default")}})
	eq(t, "identity", deref(e.Identity), 30125)
	eq(t, "pod", deref(e.PodName), "holder")
	eq(t, "namespace", deref(e.Namespace), "cca-dp")
	eq(t, "policy", e.PolicyEnabled, "none")
	eq(t, "first label", e.Labels[0], "k8s:app=holder")
	eq(t, "by id", l.ID(1234).Networking.InterfaceName, "lxc3a6f7d4e8c73")
	eq(t, "missing id", l.ID(1).ID, 0)
	eq(t, "by IPv4", l.ByIPv4("10.42.0.40").ID, 1234)
	eq(t, "missing IPv4", l.ByIPv4("10.42.0.41").ID, 0)
	eq(t, "empty IPv4", l.ByIPv4("").ID, 0)
}

func TestEndpointGetObjectAndErrors(t *testing.T) {
	l, err := ParseEndpointGet(`{"id": 7, "status": {"state": "ready", "networking": {"interface-name": "lxc1", "interface-index": 9}}}`)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "single object", l[0].Networking.InterfaceIndex, 9)
	eq(t, "no addressing", l[0].Networking.Addressing, []EndpointAddress{})
	_, err = ParseEndpointGet("")
	wantError(t, err, kindEndpointGet, 0, "empty input")
	_, err = ParseEndpointGet(`[{"spec": {}}]`)
	wantError(t, err, kindEndpointGet, 0, "no id or status")
	_, err = ParseEndpointGet("Error: cannot get endpoint 99: not found\n")
	wantError(t, err, kindEndpointGet, 1, "invalid JSON")
}

func TestEndpointList(t *testing.T) {
	l, err := ParseEndpointList(input(t, "synthetic/cilium-endpoint-list/v1.20.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 4)
	eq(t, "host labels", l[0].Labels, []string{"k8s:node-role.kubernetes.io/control-plane=true", "k8s:node.kubernetes.io/instance-type=k3s", "reserved:host"})
	eq(t, "host has no IPv4 cell", l[0].IPv4, (*string)(nil))
	h := l.ByIPv4("10.42.0.40")
	eq(t, "holder id", h.ID, 1234)
	eq(t, "holder identity", deref(h.Identity), 30125)
	eq(t, "ipv6 column empty", h.IPv6, (*string)(nil))
	eq(t, "status", h.Status, "ready")
	eq(t, "HasLabel", h.HasLabel("k8s:app=holder"), true)
	eq(t, "policy", l[2].PolicyIngress, "Enabled")
	eq(t, "no label id", l[3].Identity, (*int)(nil))
	eq(t, "waiting", l[3].Status, "waiting-for-identity")
}

func TestEndpointListErrors(t *testing.T) {
	_, err := ParseEndpointList("")
	wantError(t, err, kindEndpointList, 0, "empty input")
	_, err = ParseEndpointList("ID Frontend\n")
	wantError(t, err, kindEndpointList, 1, "expected header")
}
