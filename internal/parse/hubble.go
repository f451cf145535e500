package parse

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

const kindHubble = "hubble-observe"

// HubbleFlows is what `hubble observe -o jsonpb` printed: Hubble's flows,
// in the order they came, and the events it lost.
type HubbleFlows struct {
	// Flows are the flows, one a line.
	Flows []HubbleFlow `json:"flows" expr:"flows"`
	// Lost counts the events Hubble lost before it could send them (the
	// num_events_lost of its lost_events lines: a ring buffer that filled
	// up, a slow reader): a capture that lost some may have missed the
	// flow asserted on.
	Lost int `json:"lost" expr:"lost"`
	// Others are the lines of other responses (node status, agent and
	// debug events), as printed.
	Others []string `json:"others" expr:"others"`
}

// HubbleFlow is one flow (observer.GetFlowsResponse's flow, Cilium
// 1.20's flow.Flow), with what a lab asserts on; a field the flow does
// not hold is null (the JSON leaves out what is zero: a verdict of
// VERDICT_UNKNOWN, a port 0, a flow with no drop reason).
type HubbleFlow struct {
	// Time is when the event happened, as printed (RFC 3339, UTC); null
	// when the flow has none.
	Time *string `json:"time" expr:"time"`
	// Verdict is "FORWARDED", "DROPPED", "AUDIT", "REDIRECTED", "ERROR",
	// "TRACED" or "TRANSLATED"; null when unknown.
	Verdict *string `json:"verdict" expr:"verdict"`
	// DropReason is why a dropped flow was dropped, as Hubble names it
	// (drop_reason_desc: "POLICY_DENIED", "POLICY_DENY" for a deny rule,
	// "STALE_OR_UNROUTABLE_IP", ...); null for a flow not dropped.
	DropReason *string `json:"dropReason" expr:"dropReason"`
	// FlowType is the flow's Type: "L3_L4", "L7" or "SOCK"; null when
	// unknown.
	FlowType *string `json:"flowType" expr:"flowType"`
	// EventType and EventSubType are the monitor event the flow came from
	// (event_type.type: 1 a drop, 4 a trace, 5 a policy verdict, ...;
	// sub_type: the drop reason's or the trace point's number); null when
	// 0, which the JSON leaves out (a trace to an endpoint's sub_type).
	EventType    *int `json:"eventType" expr:"eventType"`
	EventSubType *int `json:"eventSubType" expr:"eventSubType"`
	// TraceObservationPoint is where a trace saw the packet
	// ("TO_ENDPOINT", "FROM_ENDPOINT", "TO_STACK", "TO_OVERLAY", ...);
	// null for other events.
	TraceObservationPoint *string `json:"traceObservationPoint" expr:"traceObservationPoint"`
	// TrafficDirection is "INGRESS" or "EGRESS", seen from the endpoint
	// whose policy decided; null when unknown.
	TrafficDirection *string `json:"trafficDirection" expr:"trafficDirection"`
	// IsReply says whether the packet is a reply of its connection (null
	// when Hubble could not tell).
	IsReply *bool `json:"isReply" expr:"isReply"`
	// IPVersion is "IPv4" or "IPv6"; null for a flow that is not IP.
	IPVersion *string `json:"ipVersion" expr:"ipVersion"`
	// SrcIP and DstIP are the packet's addresses; null for a flow that is
	// not IP.
	SrcIP *string `json:"srcIP" expr:"srcIP"`
	DstIP *string `json:"dstIP" expr:"dstIP"`
	// Protocol is the L4 protocol, as the flow's l4 key names it in lower
	// case: "tcp", "udp", "sctp", "icmpv4", "icmpv6", ...; null without
	// l4.
	Protocol *string `json:"protocol" expr:"protocol"`
	// SrcPort and DstPort are the TCP, UDP or SCTP ports; null for other
	// protocols.
	SrcPort *int `json:"srcPort" expr:"srcPort"`
	DstPort *int `json:"dstPort" expr:"dstPort"`
	// TCPFlags are the TCP flags set, in Hubble's order, as "SYN, ACK";
	// null for other protocols and a TCP flow without flags.
	TCPFlags *string `json:"tcpFlags" expr:"tcpFlags"`
	// ICMPType and ICMPCode are an ICMP or ICMPv6 message's; null for
	// other protocols, and for a 0 (echo reply's type, most codes), which
	// the JSON leaves out.
	ICMPType *int `json:"icmpType" expr:"icmpType"`
	ICMPCode *int `json:"icmpCode" expr:"icmpCode"`
	// SrcIdentity and DstIdentity are the security identities of the
	// source and destination; null when unknown.
	SrcIdentity *int `json:"srcIdentity" expr:"srcIdentity"`
	DstIdentity *int `json:"dstIdentity" expr:"dstIdentity"`
	// SrcEndpoint and DstEndpoint are the ids of local endpoints; null for
	// a peer that is not one.
	SrcEndpoint *int `json:"srcEndpoint" expr:"srcEndpoint"`
	DstEndpoint *int `json:"dstEndpoint" expr:"dstEndpoint"`
	// SrcNamespace, SrcPod, DstNamespace and DstPod name the pods; null
	// for a peer that is no pod Hubble knows.
	SrcNamespace *string `json:"srcNamespace" expr:"srcNamespace"`
	SrcPod       *string `json:"srcPod" expr:"srcPod"`
	DstNamespace *string `json:"dstNamespace" expr:"dstNamespace"`
	DstPod       *string `json:"dstPod" expr:"dstPod"`
	// SrcLabels and DstLabels are the identities' labels
	// ("k8s:app=frontend", "reserved:host").
	SrcLabels []string `json:"srcLabels" expr:"srcLabels"`
	DstLabels []string `json:"dstLabels" expr:"dstLabels"`
	// NodeName is the node that saw the flow; null when the flow does not
	// say.
	NodeName *string `json:"nodeName" expr:"nodeName"`
}

// Events is the number of flows and other responses read.
func (h HubbleFlows) Events() int { return len(h.Flows) + len(h.Others) }

// FlowsTo returns the flows to a destination IP and port (0: any port).
func (h HubbleFlows) FlowsTo(ip string, port int) []HubbleFlow {
	out := []HubbleFlow{}
	for _, f := range h.Flows {
		if f.DstIP != nil && *f.DstIP == ip && (port == 0 || f.DstPort != nil && *f.DstPort == port) {
			out = append(out, f)
		}
	}
	return out
}

// FlowsFrom returns the flows from a source IP.
func (h HubbleFlows) FlowsFrom(ip string) []HubbleFlow {
	out := []HubbleFlow{}
	for _, f := range h.Flows {
		if f.SrcIP != nil && *f.SrcIP == ip {
			out = append(out, f)
		}
	}
	return out
}

// ParseHubbleObserve reads what `hubble observe -o jsonpb` (or -o json,
// its alias) prints: a GetFlowsResponse a line, in proto3's JSON with the
// proto's field names (Cilium 1.20.1's hubble CLI):
//
//	{"flow":{"time":"...","verdict":"DROPPED","IP":{"source":"10.42.0.7","destination":"10.42.0.9","ipVersion":"IPv4"},"l4":{"TCP":{"source_port":40312,"destination_port":8080,"flags":{"SYN":true}}},"source":{"identity":51234,...},...,"drop_reason_desc":"POLICY_DENIED"},"node_name":"...","time":"..."}
//	{"lost_events":{"source":"HUBBLE_RING_BUFFER","num_events_lost":"3"},"time":"..."}
//
// The compact, dict and table outputs are refused: they are for people,
// and print names where the JSON has numbers.
func ParseHubbleObserve(text string) (HubbleFlows, error) {
	return parseStream(kindHubble, "flows", text, NewHubbleFlows(), ParseHubbleObserve)
}

// NewHubbleFlows is a HubbleFlows with no flows, its lists empty (not
// null).
func NewHubbleFlows() HubbleFlows {
	return HubbleFlows{Flows: []HubbleFlow{}, Others: []string{}}
}

// hubbleResponse is a GetFlowsResponse as proto3's JSON prints it, with
// the fields this reads.
type hubbleResponse struct {
	Flow       *hubbleFlowJSON `json:"flow"`
	LostEvents *struct {
		NumEventsLost *string `json:"num_events_lost"`
	} `json:"lost_events"`
	NodeStatus  json.RawMessage `json:"node_status"`
	AgentEvent  json.RawMessage `json:"agent_event"`
	DebugEvent  json.RawMessage `json:"debug_event"`
	Unsupported json.RawMessage `json:"unsupported"`
}

type hubbleFlowJSON struct {
	Time           *string `json:"time"`
	Verdict        *string `json:"verdict"`
	DropReasonDesc *string `json:"drop_reason_desc"`
	Type           *string `json:"Type"`
	EventType      *struct {
		Type    *int `json:"type"`
		SubType *int `json:"sub_type"`
	} `json:"event_type"`
	TraceObservationPoint *string `json:"trace_observation_point"`
	TrafficDirection      *string `json:"traffic_direction"`
	IsReply               *bool   `json:"is_reply"`
	NodeName              *string `json:"node_name"`
	IP                    *struct {
		Source      *string `json:"source"`
		Destination *string `json:"destination"`
		IPVersion   *string `json:"ipVersion"`
	} `json:"IP"`
	L4          map[string]json.RawMessage `json:"l4"`
	Source      *hubbleEndpointJSON        `json:"source"`
	Destination *hubbleEndpointJSON        `json:"destination"`
}

type hubbleEndpointJSON struct {
	ID        *int     `json:"ID"`
	Identity  *int     `json:"identity"`
	Namespace *string  `json:"namespace"`
	PodName   *string  `json:"pod_name"`
	Labels    []string `json:"labels"`
}

// hubbleL4 is one protocol of a flow's l4: TCP, UDP and SCTP have ports,
// TCP flags, ICMPv4 and ICMPv6 a type and code.
type hubbleL4 struct {
	SourcePort      *int            `json:"source_port"`
	DestinationPort *int            `json:"destination_port"`
	Flags           map[string]bool `json:"flags"`
	Type            *int            `json:"type"`
	Code            *int            `json:"code"`
}

// hubbleTCPFlags is the order of flow.TCPFlags' fields, which Hubble's
// own printer keeps.
var hubbleTCPFlags = []string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR", "NS"}

// Add reads one line hubble printed into h, so that a stream is read as it
// comes; it says what is wrong with a line it cannot read.
func (h *HubbleFlows) Add(line string) string {
	line = strings.TrimRight(line, " \t\r")
	if !strings.HasPrefix(line, "{") {
		return "expected a line of JSON (hubble observe -o jsonpb): its compact, dict and table outputs are not read"
	}
	var resp hubbleResponse
	dec := json.NewDecoder(bytes.NewReader([]byte(line)))
	if err := dec.Decode(&resp); err != nil {
		return "invalid JSON: " + err.Error()
	}
	if dec.More() {
		return "expected one JSON object on the line"
	}
	switch {
	case resp.Flow != nil:
		f, why := resp.Flow.flow()
		if why != "" {
			return why
		}
		h.Flows = append(h.Flows, f)
	case resp.LostEvents != nil:
		if resp.LostEvents.NumEventsLost != nil {
			n, err := strconv.Atoi(*resp.LostEvents.NumEventsLost)
			if err != nil || n < 0 {
				return "expected a number of lost events"
			}
			h.Lost += n
		}
	case resp.NodeStatus != nil || resp.AgentEvent != nil || resp.DebugEvent != nil || resp.Unsupported != nil:
		h.Others = append(h.Others, line)
	default:
		return "expected a GetFlowsResponse: a flow, lost_events, node_status, agent_event or debug_event"
	}
	return ""
}

// flow is the flow a lab reads of the JSON one.
func (j *hubbleFlowJSON) flow() (HubbleFlow, string) {
	f := HubbleFlow{Time: j.Time, Verdict: j.Verdict, DropReason: j.DropReasonDesc, FlowType: j.Type,
		TraceObservationPoint: j.TraceObservationPoint, TrafficDirection: j.TrafficDirection, IsReply: j.IsReply,
		NodeName: j.NodeName, SrcLabels: []string{}, DstLabels: []string{}}
	if j.EventType != nil {
		f.EventType, f.EventSubType = j.EventType.Type, j.EventType.SubType
	}
	if j.IP != nil {
		f.SrcIP, f.DstIP, f.IPVersion = j.IP.Source, j.IP.Destination, j.IP.IPVersion
	}
	if e := j.Source; e != nil {
		f.SrcEndpoint, f.SrcIdentity, f.SrcNamespace, f.SrcPod = e.ID, e.Identity, e.Namespace, e.PodName
		if e.Labels != nil {
			f.SrcLabels = e.Labels
		}
	}
	if e := j.Destination; e != nil {
		f.DstEndpoint, f.DstIdentity, f.DstNamespace, f.DstPod = e.ID, e.Identity, e.Namespace, e.PodName
		if e.Labels != nil {
			f.DstLabels = e.Labels
		}
	}
	if len(j.L4) > 1 {
		return f, "expected one protocol in the flow's l4"
	}
	for name, raw := range j.L4 {
		var l4 hubbleL4
		if err := json.Unmarshal(raw, &l4); err != nil {
			return f, "expected the flow's l4." + name + " to be an object of ports, flags or an ICMP type: " + err.Error()
		}
		proto := strings.ToLower(name)
		f.Protocol = &proto
		f.SrcPort, f.DstPort = l4.SourcePort, l4.DestinationPort
		f.ICMPType, f.ICMPCode = l4.Type, l4.Code
		if name == "TCP" {
			var set []string
			for _, flag := range hubbleTCPFlags {
				if l4.Flags[flag] {
					set = append(set, flag)
				}
			}
			if len(set) > 0 {
				s := strings.Join(set, ", ")
				f.TCPFlags = &s
			}
		}
	}
	return f, ""
}
