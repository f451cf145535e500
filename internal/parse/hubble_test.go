package parse

import (
	"fmt"
	"strings"
	"testing"
)

// hubble observe -o jsonpb's lines are read one by one, as a stream hands
// them over: flows with what the JSON printed and null for what it left
// out (proto3's JSON leaves out zeros), lost events added up, other
// responses kept; a line that is no GetFlowsResponse is refused.
func TestHubbleObserve(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // one flow a " | ", or "error: ..."
	}{
		// the shape of Cilium 1.20's flows, as in cilium/cilium#40519
		{"a flow dropped by policy",
			`{"flow":{"time":"2025-07-15T01:32:14.234858520Z","uuid":"54a59c8d-9c82-4741-ac0a-25b9c54aead6","verdict":"DROPPED","drop_reason":133,"ethernet":{"source":"92:34:10:65:b5:ee","destination":"c2:3c:0f:7f:7d:73"},"IP":{"source":"10.244.3.30","destination":"1.1.1.1","ipVersion":"IPv4"},"l4":{"TCP":{"source_port":55462,"destination_port":80,"flags":{"SYN":true}}},"source":{"ID":1238,"identity":24009,"cluster_name":"default","namespace":"cilium-test-5","labels":["k8s:kind=client"],"pod_name":"client-645b68dcf7-2jmrw"},"destination":{"identity":16777259,"labels":["reserved:world-ipv4"]},"Type":"L3_L4","node_name":"kind-worker2","event_type":{"type":1,"sub_type":133},"traffic_direction":"EGRESS","drop_reason_desc":"POLICY_DENIED","is_reply":false,"Summary":"TCP Flags: SYN"},"node_name":"kind-worker2","time":"2025-07-15T01:32:14.234858520Z"}` + "\n",
			"DROPPED POLICY_DENIED L3_L4 1/133 EGRESS reply=false tcp 10.244.3.30:55462 > 1.1.1.1:80 flags=SYN ids=24009>16777259 eps=1238>- cilium-test-5/client-645b68dcf7-2jmrw > -/- labels=1/1"},
		{"a forwarded reply, the trace point named", `{"flow":{"time":"2026-01-01T00:00:00Z","verdict":"FORWARDED","IP":{"source":"10.42.0.9","destination":"10.42.0.7","ipVersion":"IPv4"},"l4":{"TCP":{"source_port":8080,"destination_port":40312,"flags":{"SYN":true,"ACK":true}}},"source":{"ID":1203,"identity":17897,"namespace":"lab","pod_name":"api"},"destination":{"ID":99,"identity":51234,"namespace":"lab","pod_name":"frontend"},"Type":"L3_L4","event_type":{"type":4},"trace_observation_point":"TO_ENDPOINT","traffic_direction":"INGRESS","is_reply":true}}` + "\n",
			"FORWARDED - L3_L4 4/- INGRESS reply=true tcp 10.42.0.9:8080 > 10.42.0.7:40312 flags=SYN, ACK ids=17897>51234 eps=1203>99 lab/api > lab/frontend labels=0/0"},
		{"icmp, with its type and code", `{"flow":{"verdict":"DROPPED","IP":{"source":"fe80::1","destination":"ff02::2","ipVersion":"IPv6"},"l4":{"ICMPv6":{"type":133}},"source":{},"destination":{},"drop_reason_desc":"INVALID_SOURCE_IP"}}` + "\n",
			"DROPPED INVALID_SOURCE_IP - -/- - reply=- icmpv6 fe80::1:- > ff02::2:- flags=- ids=->- eps=->- -/- > -/- labels=0/0 icmp=133/-"},
		{"lost events add up, other responses are kept", `{"lost_events":{"source":"HUBBLE_RING_BUFFER","num_events_lost":"3","cpu":{"value":1}},"time":"2026-01-01T00:00:00Z"}` + "\n" +
			`{"lost_events":{"source":"PERF_EVENT_RING_BUFFER","num_events_lost":"4"}}` + "\n" +
			`{"node_status":{"state_change":"NODE_CONNECTED","node_names":["n1"]},"time":"2026-01-01T00:00:00Z"}` + "\n",
			`lost 7 | other: {"node_status":{"state_change":"NODE_CONNECTED","node_names":["n1"]},"time":"2026-01-01T00:00:00Z"}`},
		{"nothing", "", ""},

		{"the compact output", "Jun 10 12:50:15.556: 10.8.14.163:43006 <> default/deployment:8087 Policy denied DROPPED (TCP Flags: SYN)\n",
			"error: line 1: expected a line of JSON (hubble observe -o jsonpb): its compact, dict and table outputs are not read"},
		{"JSON of something else", `{"kind":"Pod"}` + "\n", "error: line 1: expected a GetFlowsResponse"},
		{"two protocols in l4", `{"flow":{"l4":{"TCP":{},"UDP":{}}}}` + "\n", "error: line 1: expected one protocol in the flow's l4"},
		{"a port that is not a number", `{"flow":{"l4":{"TCP":{"source_port":"x"}}}}` + "\n", "error: line 1: expected the flow's l4.TCP to be an object"},
		{"lost events that are not a number", `{"lost_events":{"num_events_lost":"many"}}` + "\n", "error: line 1: expected a number of lost events"},
		{"two objects on a line", `{"flow":{}} {"flow":{}}` + "\n", "error: line 1: expected one JSON object on the line"},
		{"cut mid-line", `{"flow":{"verdict":"DROP`, "error: line 1: output ends mid-line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHubbleObserve(tt.in)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err %v, want one containing %q (got %+v)", err, strings.TrimPrefix(tt.want, "error: "), got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := describeHubble(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func describeHubble(h HubbleFlows) string {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	num := func(p *int) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	var out []string
	for _, f := range h.Flows {
		reply := "-"
		if f.IsReply != nil {
			reply = fmt.Sprint(*f.IsReply)
		}
		s := fmt.Sprintf("%s %s %s %s/%s %s reply=%s %s %s:%s > %s:%s flags=%s ids=%s>%s eps=%s>%s %s/%s > %s/%s labels=%d/%d",
			str(f.Verdict), str(f.DropReason), str(f.FlowType), num(f.EventType), num(f.EventSubType), str(f.TrafficDirection), reply,
			str(f.Protocol), str(f.SrcIP), num(f.SrcPort), str(f.DstIP), num(f.DstPort), str(f.TCPFlags),
			num(f.SrcIdentity), num(f.DstIdentity), num(f.SrcEndpoint), num(f.DstEndpoint),
			str(f.SrcNamespace), str(f.SrcPod), str(f.DstNamespace), str(f.DstPod), len(f.SrcLabels), len(f.DstLabels))
		if f.ICMPType != nil || f.ICMPCode != nil {
			s += fmt.Sprintf(" icmp=%s/%s", num(f.ICMPType), num(f.ICMPCode))
		}
		out = append(out, s)
	}
	if h.Lost > 0 {
		out = append(out, fmt.Sprintf("lost %d", h.Lost))
	}
	for _, o := range h.Others {
		out = append(out, "other: "+o)
	}
	return strings.Join(out, " | ")
}

// The methods a lab asserts with pick the flows of one destination or
// source.
func TestHubbleMethods(t *testing.T) {
	h, err := ParseHubbleObserve(input(t, "public/hubble-observe/docs-exporter-fieldmask-dropped.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "to deathstar:80", len(h.FlowsTo("10.244.1.5", 80)), 1)
	eq(t, "to deathstar, any port", len(h.FlowsTo("10.244.1.5", 0)), 1)
	eq(t, "to deathstar:81", len(h.FlowsTo("10.244.1.5", 81)), 0)
	eq(t, "from xwing", *h.FlowsFrom("10.244.1.60")[0].SrcPod, "xwing")
	eq(t, "Events", h.Events(), 2)
}
