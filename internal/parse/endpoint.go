package parse

import (
	"encoding/json"
	"strconv"
	"strings"
)

const (
	kindEndpointGet  = "cilium-endpoint-get"
	kindEndpointList = "cilium-endpoint-list"
)

// Endpoint is one element of `cilium-dbg endpoint get <id>`, which always
// prints a JSON array (one element when asked for one id).
type Endpoint struct {
	// ID is the endpoint's id on its node (the agent's, 1..65535), the
	// number `endpoint list` prints and the policy map's name ends with.
	ID int `json:"id" expr:"id"`
	// State is status.state: ready, waiting-for-identity,
	// waiting-to-regenerate, regenerating, restoring, disconnecting, ...;
	// "" when the document has none.
	State string `json:"state" expr:"state"`
	// Labels are status.labels.security-relevant, the labels the identity
	// is derived from ("k8s:app=web"), as `endpoint list` shows them.
	Labels []string `json:"labels" expr:"labels"`
	// Identity is the numeric security identity (status.identity.id);
	// null when the document has none (an endpoint still waiting for its
	// identity).
	Identity *int `json:"identity" expr:"identity"`
	// IdentityLabels are the identity's labels (status.identity.labels).
	IdentityLabels []string `json:"identityLabels" expr:"identityLabels"`
	// Networking is status.networking: the endpoint's interfaces and
	// addresses (zero values when the document has none).
	Networking EndpointNetworking `json:"networking" expr:"networking"`
	// PodName is status.external-identifiers.k8s-pod-name; null when
	// Cilium did not print it (1.20 fills external-identifiers with
	// cni-attachment-id only: find the pod by its IP or labels).
	PodName *string `json:"podName" expr:"podName"`
	// Namespace is status.external-identifiers.k8s-namespace; null when
	// Cilium did not print it, as PodName (the identity's labels hold
	// "k8s:io.kubernetes.pod.namespace=NS" either way).
	Namespace *string `json:"namespace" expr:"namespace"`
	// ContainerID and ContainerName are
	// status.external-identifiers.container-id and container-name; null
	// when Cilium did not print them (1.20 does not).
	ContainerID   *string `json:"containerID" expr:"containerID"`
	ContainerName *string `json:"containerName" expr:"containerName"`
	// PolicyEnabled is status.policy.realized.policy-enabled: none,
	// ingress, egress, both, audit-...
	PolicyEnabled string `json:"policyEnabled" expr:"policyEnabled"`
	// Health is status.health.overallHealth: OK, Bootstrap, Warning,
	// Failure or Disabled; "" when the document has none.
	Health string `json:"health" expr:"health"`
}

// EndpointNetworking is status.networking. InterfaceName is the host side
// of the endpoint's veth ("lxc..."); InterfaceIndex its ifindex on the host,
// the number bpftool prints as "lxc...(26)". There is no
// host-interface-name field in Cilium's model.
type EndpointNetworking struct {
	// InterfaceName is interface-name, the host side of the endpoint's
	// veth ("lxca3503f14b1d6"), the device bpftool and tc show Cilium's
	// programs on; "" when the document has none.
	InterfaceName string `json:"interfaceName" expr:"interfaceName"`
	// InterfaceIndex is interface-index, that device's ifindex on the
	// host (bpftool's "lxc...(16)"); 0 when the document has none.
	InterfaceIndex int `json:"interfaceIndex" expr:"interfaceIndex"`
	// ContainerInterfaceName is container-interface-name, the pod's side
	// of the veth as the pod names it ("eth0"); null when not printed
	// (the host's endpoint has none).
	ContainerInterfaceName *string `json:"containerInterfaceName" expr:"containerInterfaceName"`
	// Mac is the MAC address of the pod's side of the veth, HostMac the
	// host side's ("a2:e8:ca:2c:9b:b3"); "" when not printed.
	Mac     string `json:"mac" expr:"mac"`
	HostMac string `json:"hostMac" expr:"hostMac"`
	// IPv4 and IPv6 are the first addressing entry's addresses; null when
	// there is no entry or it has no address of that family (IPv6 off).
	IPv4 *string `json:"ipv4" expr:"ipv4"`
	IPv6 *string `json:"ipv6" expr:"ipv6"`
	// Addressing is every addressing entry, in printed order (one per
	// address pair the endpoint was given); empty when none.
	Addressing []EndpointAddress `json:"addressing" expr:"addressing"`
}

// EndpointAddress is one status.networking.addressing entry; a field the
// entry does not have is null (the host's endpoint has an empty entry,
// and no entry has IPv6 when IPv6 is off).
type EndpointAddress struct {
	// IPv4 and IPv6 are the entry's addresses ("10.42.0.44"); null for a
	// family the endpoint has no address of (IPv6 off).
	IPv4 *string `json:"ipv4" expr:"ipv4"`
	IPv6 *string `json:"ipv6" expr:"ipv6"`
	// IPv4PoolName and IPv6PoolName are the IPAM pools the addresses
	// came from ("default"); null when not printed.
	IPv4PoolName *string `json:"ipv4PoolName" expr:"ipv4PoolName"`
	IPv6PoolName *string `json:"ipv6PoolName" expr:"ipv6PoolName"`
}

// EndpointGet is the parsed `cilium-dbg endpoint get`: a list of
// endpoints, as `endpoint list -o json` prints too, and the agent's API
// serves at GET /v1/endpoint (all of them) and /v1/endpoint/ID (that one,
// as an object).
type EndpointGet []Endpoint

// ByIPv4 returns the endpoint that has the IPv4 address ip, or a zero
// Endpoint (ID 0, identity null), as EndpointList.ByIPv4 does for the table.
func (l EndpointGet) ByIPv4(ip string) Endpoint {
	if ip == "" {
		return emptyEndpoint()
	}
	for _, e := range l {
		for _, a := range e.Networking.Addressing {
			if a.IPv4 != nil && *a.IPv4 == ip {
				return e
			}
		}
	}
	return emptyEndpoint()
}

// ID returns the endpoint with the given id, or a zero Endpoint (ID 0).
func (l EndpointGet) ID(id int) Endpoint {
	for _, e := range l {
		if e.ID == id {
			return e
		}
	}
	return emptyEndpoint()
}

func emptyEndpoint() Endpoint {
	return Endpoint{Labels: []string{}, IdentityLabels: []string{}, Networking: EndpointNetworking{Addressing: []EndpointAddress{}}}
}

// JSON shape of models.Endpoint (api/v1/models/endpoint*.go), only what is
// read.
type jsonEndpoint struct {
	ID     *int `json:"id"`
	Status *struct {
		State    string `json:"state"`
		Identity *struct {
			ID     *int     `json:"id"`
			Labels []string `json:"labels"`
		} `json:"identity"`
		Labels *struct {
			SecurityRelevant []string `json:"security-relevant"`
		} `json:"labels"`
		ExternalIdentifiers *struct {
			ContainerID   *string `json:"container-id"`
			ContainerName *string `json:"container-name"`
			K8sNamespace  *string `json:"k8s-namespace"`
			K8sPodName    *string `json:"k8s-pod-name"`
		} `json:"external-identifiers"`
		Health *struct {
			OverallHealth string `json:"overallHealth"`
		} `json:"health"`
		Policy *struct {
			Realized *struct {
				PolicyEnabled string `json:"policy-enabled"`
			} `json:"realized"`
		} `json:"policy"`
		Networking *struct {
			Addressing []struct {
				IPv4         *string `json:"ipv4"`
				IPv6         *string `json:"ipv6"`
				IPv4PoolName *string `json:"ipv4-pool-name"`
				IPv6PoolName *string `json:"ipv6-pool-name"`
			} `json:"addressing"`
			ContainerInterfaceName *string `json:"container-interface-name"`
			HostMac                string  `json:"host-mac"`
			InterfaceIndex         int     `json:"interface-index"`
			InterfaceName          string  `json:"interface-name"`
			Mac                    string  `json:"mac"`
		} `json:"networking"`
	} `json:"status"`
}

// ParseEndpointGet parses `cilium-dbg endpoint get <id> [-o json]`. The
// output is a JSON array; a single object (from a tool that unwrapped it)
// is accepted too.
func ParseEndpointGet(text string) (EndpointGet, error) {
	t := strings.TrimSpace(text)
	var raw []jsonEndpoint
	if strings.HasPrefix(t, "{") {
		var one jsonEndpoint
		if err := json.Unmarshal([]byte(text), &one); err != nil {
			return nil, jsonError(kindEndpointGet, text, err)
		}
		raw = []jsonEndpoint{one}
	} else if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, jsonError(kindEndpointGet, text, err)
	}
	out := make(EndpointGet, 0, len(raw))
	for i, je := range raw {
		if je.ID == nil || je.Status == nil {
			return nil, newError(kindEndpointGet, 0, "", "element "+strconv.Itoa(i)+": no id or status; is this an endpoint?")
		}
		e := emptyEndpoint()
		e.ID = *je.ID
		st := je.Status
		e.State = st.State
		if st.Identity != nil {
			e.Identity = st.Identity.ID
			e.IdentityLabels = append(e.IdentityLabels, st.Identity.Labels...)
		}
		if st.Labels != nil {
			e.Labels = append(e.Labels, st.Labels.SecurityRelevant...)
		}
		if x := st.ExternalIdentifiers; x != nil {
			e.PodName, e.Namespace, e.ContainerID, e.ContainerName = x.K8sPodName, x.K8sNamespace, x.ContainerID, x.ContainerName
		}
		if st.Health != nil {
			e.Health = st.Health.OverallHealth
		}
		if st.Policy != nil && st.Policy.Realized != nil {
			e.PolicyEnabled = st.Policy.Realized.PolicyEnabled
		}
		if n := st.Networking; n != nil {
			e.Networking.InterfaceName = n.InterfaceName
			e.Networking.InterfaceIndex = n.InterfaceIndex
			e.Networking.ContainerInterfaceName = n.ContainerInterfaceName
			e.Networking.Mac = n.Mac
			e.Networking.HostMac = n.HostMac
			for _, a := range n.Addressing {
				e.Networking.Addressing = append(e.Networking.Addressing, EndpointAddress(a))
			}
			if len(n.Addressing) > 0 {
				e.Networking.IPv4 = n.Addressing[0].IPv4
				e.Networking.IPv6 = n.Addressing[0].IPv6
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// EndpointListEntry is one endpoint of the `cilium-dbg endpoint list`
// table.
type EndpointListEntry struct {
	// ID is the ENDPOINT column, the endpoint's id on its node.
	ID int `json:"id" expr:"id"`
	// PolicyIngress and PolicyEgress are the POLICY (ingress) and
	// (egress) ENFORCEMENT columns: Enabled, Disabled, Audit or
	// <unknown>, as printed.
	PolicyIngress string `json:"policyIngress" expr:"policyIngress"`
	PolicyEgress  string `json:"policyEgress" expr:"policyEgress"`
	// Identity is the IDENTITY column, the security identity; null when
	// Cilium printed "<no label id>" (no identity yet).
	Identity *int `json:"identity" expr:"identity"`
	// Labels are the LABELS column, one per table line
	// ("k8s:app=web"); ["no labels"] is kept as printed.
	Labels []string `json:"labels" expr:"labels"`
	// IPv6 and IPv4 are the endpoint's addresses; null when the column
	// is empty (IPv6 off, or no address yet).
	IPv6 *string `json:"ipv6" expr:"ipv6"`
	IPv4 *string `json:"ipv4" expr:"ipv4"`
	// Status is the STATUS column: ready, waiting-for-identity,
	// regenerating, ... (the endpoint's state).
	Status string `json:"status" expr:"status"`
}

// EndpointList is the parsed `cilium-dbg endpoint list`.
type EndpointList []EndpointListEntry

// ByIPv4 returns the endpoint with that IPv4 address, or a zero entry
// (ID 0, identity null).
func (l EndpointList) ByIPv4(ip string) EndpointListEntry {
	for _, e := range l {
		if e.IPv4 != nil && *e.IPv4 == ip {
			return e
		}
	}
	return EndpointListEntry{Labels: []string{}}
}

// HasLabel reports whether the endpoint has label l ("k8s:app=web").
func (e EndpointListEntry) HasLabel(l string) bool {
	for _, x := range e.Labels {
		if x == l {
			return true
		}
	}
	return false
}

// ParseEndpointList parses the `cilium-dbg endpoint list` table. An
// endpoint with several labels takes several lines, the ones after the first
// having only the LABELS column. The IPv6 column is empty when IPv6 is off,
// so columns are cut at the header's positions (see table).
func ParseEndpointList(text string) (EndpointList, error) {
	if err := refuseCut(kindEndpointList, "endpoints", text, ParseEndpointList, func(l EndpointList) int { return len(l) }); err != nil {
		return nil, err
	}
	titles := []string{"ENDPOINT", "POLICY (ingress)", "POLICY (egress)", "IDENTITY", "LABELS (source:key[=value])", "IPv6", "IPv4", "STATUS"}
	r := newLineReader(text)
	out := EndpointList{}
	var t table
	haveHeader := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if !haveHeader {
			if t, haveHeader = newTable(line, titles); !haveHeader {
				return nil, newError(kindEndpointList, r.num, line, `expected header "ENDPOINT POLICY (ingress) POLICY (egress) IDENTITY LABELS ... STATUS"`)
			}
			continue
		}
		c, ok := t.cells(line)
		if !ok {
			return nil, newError(kindEndpointList, r.num, line, "line not aligned with the table header")
		}
		if c[0] == "" {
			if c[1] == "ENFORCEMENT" && c[2] == "ENFORCEMENT" {
				continue // second header line
			}
			if len(out) == 0 || c[4] == "" || c[1]+c[2]+c[3]+c[5]+c[6]+c[7] != "" {
				return nil, newError(kindEndpointList, r.num, line, "expected a label continuation line")
			}
			out[len(out)-1].Labels = append(out[len(out)-1].Labels, c[4])
			continue
		}
		id, err := strconv.Atoi(c[0])
		if err != nil {
			return nil, newError(kindEndpointList, r.num, line, "expected a numeric endpoint id")
		}
		e := EndpointListEntry{ID: id, PolicyIngress: c[1], PolicyEgress: c[2], Labels: []string{},
			IPv6: orNull(c[5]), IPv4: orNull(c[6]), Status: c[7]}
		if c[3] != "<no label id>" {
			n, err := strconv.Atoi(c[3])
			if err != nil {
				return nil, newError(kindEndpointList, r.num, line, "expected a numeric identity")
			}
			e.Identity = &n
		}
		if c[4] != "" {
			e.Labels = append(e.Labels, c[4])
		}
		out = append(out, e)
	}
	if !haveHeader {
		return nil, newError(kindEndpointList, 0, "", "empty input")
	}
	return out, nil
}
