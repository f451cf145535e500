package parse

import "testing"

func TestServiceListJSONLab(t *testing.T) {
	l, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 10)
	web := l.Named("cca-dp", "web")
	eq(t, "web frontends", len(web), 1)
	eq(t, "web id", web[0].ID, ptr(7))
	eq(t, "web frontend", web[0].Frontend, L4Addr{IP: "10.43.77.5", Port: 80, Protocol: ptr("TCP"), Scope: ptr("external")})
	eq(t, "web frontend text", web[0].Frontend.HostPort(), "10.43.77.5:80")
	eq(t, "web backends", web[0].BackendAddrs(), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	weight := 100
	eq(t, "backend fields", web[0].Backends[0], Backend{IP: "10.42.0.31", Port: 8080, Protocol: ptr("TCP"), NodeName: ptr("lab-node"), State: "active", Preferred: true, Weight: &weight})
	eq(t, "type", web[0].Type, "ClusterIP")
	eq(t, "policy", deref(web[0].ExtTrafficPolicy), "Cluster")

	ghost := l.Named("cca-dp", "ghost")[0]
	// "backend-addresses": null becomes an empty list.
	eq(t, "ghost backends", ghost.Backends, []Backend{})

	np := l.Frontend("0.0.0.0:30780/TCP")
	eq(t, "nodeport id", np.ID, ptr(10))
	eq(t, "nodeport type", np.Type, "NodePort")
	eq(t, "internal scope is separate", l.Frontend("0.0.0.0:31500/TCP/i").ID, ptr(13))
	eq(t, "external scope by default", l.Frontend("0.0.0.0:31500").ID, ptr(12))
	eq(t, "no protocol: first listed", l.Frontend("10.43.0.10:53").ID, ptr(2))
	eq(t, "exact protocol", l.Frontend("10.43.0.10:53/TCP").ID, ptr(3))
	eq(t, "missing", l.Frontend("10.9.9.9:1").ID, (*int)(nil))
	eq(t, "missing has empty backends", l.Frontend("10.9.9.9:1").Backends, []Backend{})
}

func TestServiceListTableMatchesJSON(t *testing.T) {
	js, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != len(tb) {
		t.Fatalf("json has %d services, table %d", len(js), len(tb))
	}
	for i := range js {
		eq(t, "id", tb[i].ID, js[i].ID)
		eq(t, "frontend", tb[i].Frontend, js[i].Frontend)
		eq(t, "type", tb[i].Type, js[i].Type)
		eq(t, "backends", tb[i].BackendAddrs(), js[i].BackendAddrs())
		for j := range js[i].Backends {
			eq(t, "state", tb[i].Backends[j].State, js[i].Backends[j].State)
		}
	}
}

// What Cilium's models omit when it is zero is null, not "" or 0: -o
// json prints natPolicy, healthCheckNodePort and cluster only for a
// service that has one, and nodeName and zone only for a backend that has
// one; the table prints none of them (only the "(Remote)" mark), so they
// are null from it.
func TestServiceListOmittedKeysAreNull(t *testing.T) {
	js, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-json-ipv6-remote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dns := js.Named("kube-system", "kube-dns")[0]
	eq(t, "no healthCheckNodePort", dns.HealthCheckNodePort, (*int)(nil))
	eq(t, "no natPolicy", dns.NatPolicy, (*string)(nil))
	eq(t, "no cluster", dns.Cluster, (*string)(nil))
	eq(t, "not remote", dns.Remote, false)
	eq(t, "no zone", dns.Backends[0].Zone, (*string)(nil))
	eq(t, "node", dns.Backends[0].NodeName, ptr("lab-node"))

	front := js.Named("shop", "front")[0]
	eq(t, "healthCheckNodePort", front.HealthCheckNodePort, ptr(31999))
	eq(t, "zone", front.Backends[0].Zone, ptr("zone-a"))
	api := js.Named("shop", "api")[0]
	eq(t, "cluster", api.Cluster, ptr("east"))
	eq(t, "remote", api.Remote, true)
	eq(t, "natPolicy", js.Named("shop", "legacy")[0].NatPolicy, ptr("Nat46"))
	eq(t, "id", front.ID, ptr(23))
	// A frontend Cilium has not written to the datapath has ID 0: the
	// JSON omits it, the table prints 0.
	noID := js.Frontend("0.0.0.0:31080/TCP")
	eq(t, "frontend without an ID", []any{deref(noID.Name), noID.ID}, []any{"front", (*int)(nil)})
	proxy := js.Named("shop", "checkout")[0].Backends[1]
	eq(t, "proxy backend", proxy.HostPort(), "127.0.0.1:15001")
	eq(t, "proxy backend has no node", proxy.NodeName, (*string)(nil))
	eq(t, "proxy backend has no weight", proxy.Weight, (*int)(nil))

	tb, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-table-ipv6-remote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "services", len(tb), len(js))
	for i, s := range tb {
		if s.NatPolicy != nil || s.HealthCheckNodePort != nil || s.Cluster != nil {
			t.Errorf("table service %s: natPolicy, healthCheckNodePort or cluster not null", s.Frontend)
		}
		eq(t, "remote of "+s.Frontend.String(), s.Remote, js[i].Remote)
		eq(t, "id of "+s.Frontend.String(), s.ID, js[i].ID)
		for _, b := range s.Backends {
			if b.NodeName != nil || b.Zone != nil {
				t.Errorf("table service %s backend %s: nodeName or zone not null", s.Frontend, b.HostPort())
			}
		}
	}
}

func TestServiceListTableIPv6Remote(t *testing.T) {
	l, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.20-table-ipv6-remote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "v6 frontend", l[0].Frontend.String(), "[fd00:10:96::a]:53/UDP")
	eq(t, "v6 backends", l[0].BackendAddrs(), []string{"[fd00:10:244::12]:53", "[fd00:10:244::13]:53"})
	eq(t, "quarantined", l[0].Backends[1].State, "quarantined")
	eq(t, "remote type", l[1].Type, "ClusterIP")
	eq(t, "remote", l[1].Remote, true)
	eq(t, "local redirect", l[3].Type, "LocalRedirect")
}

func TestServiceListTable115(t *testing.T) {
	// v1.15 printed frontends and backends without "/PROTO".
	text := "ID   Frontend        Service Type   Backend\n" +
		"7    10.43.77.5:80   ClusterIP      1 => 10.42.0.31:8080 (active)\n" +
		"                                    2 => 10.42.0.32:8080 (active) (preferred)\n" +
		"11   10.43.7.7:80    ClusterIP\n"
	l, err := ParseServiceList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "protocol not printed", l[0].Frontend, L4Addr{IP: "10.43.77.5", Port: 80, Scope: ptr("external")})
	eq(t, "backends", l[0].BackendAddrs(), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	eq(t, "preferred", l[0].Backends[1].Preferred, true)
	eq(t, "ghost", len(l[1].Backends), 0)
	eq(t, "match with protocol still finds it", l.Frontend("10.43.77.5:80/TCP").ID, ptr(7))
}

func TestServiceListErrors(t *testing.T) {
	_, err := ParseServiceList("")
	wantError(t, err, kindServiceList, 0, "empty input")
	_, err = ParseServiceList("SERVICE ADDRESS   BACKEND ADDRESS\n")
	wantError(t, err, kindServiceList, 1, "expected header")
	_, err = ParseServiceList("ID   Frontend       Service Type   Backend\nx    10.0.0.1:80    ClusterIP\n")
	wantError(t, err, kindServiceList, 2, "numeric service ID")
	_, err = ParseServiceList("ID   Frontend       Service Type   Backend\n1    10.0.0.1:80    ClusterIP      1 -> nope\n")
	wantError(t, err, kindServiceList, 2, `"N => ip:port/PROTO (state)"`)
	_, err = ParseServiceList("[{\"spec\": 1}]")
	wantError(t, err, kindServiceList, 1, "invalid JSON")
	_, err = ParseServiceList("[{\"spec\": {\"id\": 1}}]")
	wantError(t, err, kindServiceList, 0, "no spec.frontend-address")
	_, err = ParseServiceList("[\n{\"spec\": {\n\"id\": \"x\"}}]")
	wantError(t, err, kindServiceList, 3, "invalid JSON")
}
