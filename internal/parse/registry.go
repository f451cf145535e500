package parse

import (
	"reflect"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// Parser describes one parser for the engine: the CLI kind
// (`labrun parse KIND [FILE|-]`), the expr function name, a one-line doc,
// the function and the Go type it returns, and the commands whose output
// it reads.
type Parser struct {
	Kind   string // CLI name, e.g. "cilium-status"
	Func   string // expr function name, e.g. "parseCiliumStatus"
	Doc    string
	Parse  func(string) (any, error)
	Result reflect.Type
	// Commands are the command lines whose output the parser reads, as
	// ForCommand matches them: the program and words the line holds, in
	// any order among others ("cilium-dbg bpf ct list"); a word written
	// !word must not be there. "GET /v1/PATH" is a document of the Cilium
	// agent's API, fetched with curl --unix-socket; a path ending in "/"
	// stands for the paths below it.
	Commands []string
	// Records names the field of Result that holds its records (one per
	// line or row of the output), for output that streams them one by
	// one; "" when Result is itself a list or is a single record.
	Records string
}

// wrap adapts a typed parser to Parser.Parse: it takes colour codes off
// the text first (plainText; the one place that does, so that every kind
// reads grep --color=always output alike). On error it returns a nil any,
// not a typed zero value, so callers can test the result for nil.
func wrap[T any](kind string, f func(string) (T, error)) func(string) (any, error) {
	return func(s string) (any, error) {
		s, err := plainText(kind, s)
		if err != nil {
			return nil, err
		}
		v, err := f(s)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// All lists every parser. It is plain data: building it runs no code with
// side effects.
var All = []Parser{
	{Kind: kindStatus, Func: "parseCiliumStatus", Parse: wrap(kindStatus, ParseStatus), Result: typeOf[Status](),
		Doc:      "cilium-dbg status [--verbose] [-o json] (or the agent API's GET /v1/healthz): KubeProxyReplacement, its details block, routing, attach mode, every Label: value",
		Commands: []string{"cilium-dbg status !--brief", "GET /v1/healthz"}},
	{Kind: kindServiceList, Func: "parseCiliumServiceList", Parse: wrap(kindServiceList, ParseServiceList), Result: typeOf[ServiceList](),
		Doc:      "cilium-dbg service list [-o json] (or GET /v1/service): services with frontend, backends, type, name",
		Commands: []string{"cilium-dbg service list", "GET /v1/service"}},
	{Kind: kindLBList, Func: "parseCiliumBPFLBList", Parse: wrap(kindLBList, ParseLBList), Result: typeOf[LBList](), Records: "Entries",
		Doc:      "cilium-dbg bpf lb list [--frontends|--backends|--revnat] [-o json]: one entry per frontend slot; Frontend()/Backends() group them",
		Commands: []string{"cilium-dbg bpf lb list"}},
	{Kind: kindCTList, Func: "parseCiliumBPFCTList", Parse: wrap(kindCTList, ParseCTList), Result: typeOf[CTList](), Records: "Entries",
		Doc:      "cilium-dbg bpf ct list global: conntrack entries with direction, addresses and counters",
		Commands: []string{"cilium-dbg bpf ct list"}},
	{Kind: kindEndpointGet, Func: "parseCiliumEndpointGet", Parse: wrap(kindEndpointGet, ParseEndpointGet), Result: typeOf[EndpointGet](),
		Doc:      "cilium-dbg endpoint get ID, endpoint list -o json (or GET /v1/endpoint[/ID]): endpoints with identity, labels and host-side interface",
		Commands: []string{"cilium-dbg endpoint get", "GET /v1/endpoint", "GET /v1/endpoint/"}},
	{Kind: kindEndpointList, Func: "parseCiliumEndpointList", Parse: wrap(kindEndpointList, ParseEndpointList), Result: typeOf[EndpointList](),
		Doc:      "cilium-dbg endpoint list: endpoints with policy enforcement, identity, labels, IPs, status",
		Commands: []string{"cilium-dbg endpoint list"}},
	{Kind: kindMapList, Func: "parseCiliumMapList", Parse: wrap(kindMapList, ParseMapList), Result: typeOf[MapList](),
		Doc:      "cilium-dbg map list [-o json] (or GET /v1/map): open BPF maps with entry and error counts",
		Commands: []string{"cilium-dbg map list", "GET /v1/map"}},
	{Kind: kindIPCacheList, Func: "parseCiliumBPFIPCacheList", Parse: wrap(kindIPCacheList, ParseIPCacheList), Result: typeOf[bpfentries.IPCacheEntries](),
		Doc:      "cilium-dbg bpf ipcache list [-o json]: prefixes with identity, tunnel endpoint, flags; the bpfmap ipcache entries, so Lookup and IdentityOf work alike",
		Commands: []string{"cilium-dbg bpf ipcache list"}},
	{Kind: kindPolicyGet, Func: "parseCiliumBPFPolicyGet", Parse: wrap(kindPolicyGet, ParsePolicyGet), Result: typeOf[PolicyGet](), Records: "Entries",
		Doc:      "cilium-dbg bpf policy get [-n] ID (or --all, -o json): an endpoint's policy map, each entry with its verdict, peer, PORT/PROTO and the packets and bytes it decided; Find/PacketsOf name one entry",
		Commands: []string{"cilium-dbg bpf policy get"}},
	{Kind: kindMonitor, Func: "parseCiliumMonitor", Parse: wrap(kindMonitor, ParseMonitor), Result: typeOf[Monitor](),
		Doc:      "cilium-dbg monitor [-j] [-n] [--type drop|trace|policy-verdict]: drops with reason, identities and ports; policy verdicts; traces; lost events (what the capture action reads as it comes)",
		Commands: []string{"cilium-dbg monitor"}},
	{Kind: kindHubble, Func: "parseHubbleObserve", Parse: wrap(kindHubble, ParseHubbleObserve), Result: typeOf[HubbleFlows](), Records: "Flows",
		Doc:      "hubble observe -o jsonpb: flows with verdict, drop reason, identities, namespaces, pods, addresses, ports, direction; lost events (what the capture action's hubble source reads as it comes)",
		Commands: []string{"hubble observe"}},
	{Kind: kindTcpdump, Func: "parseTcpdump", Parse: wrap(kindTcpdump, ParseTcpdump), Result: typeOf[Tcpdump](), Records: "Packets",
		Doc:      "tcpdump -l -n [-i any]: packets with time, interface, addresses, ports, protocol, TCP flags, length, ICMP type, and the packet a tunnel carried (what the capture action's tcpdump source reads as it comes)",
		Commands: []string{"tcpdump"}},
	{Kind: kindConfig, Func: "parseCiliumConfig", Parse: wrap(kindConfig, ParseConfig), Result: typeOf[Config](),
		Doc:      "cilium-dbg config [-a]: every Key : value line of both sections",
		Commands: []string{"cilium-dbg config"}},
	{Kind: kindBpftoolNet, Func: "parseBpftoolNetShow", Parse: wrap(kindBpftoolNet, ParseBpftoolNetShow), Result: typeOf[BpftoolNet](), Records: "Attachments",
		Doc:      "bpftool [-j] net show [dev X]: XDP/tc/tcx/netfilter attachments",
		Commands: []string{"bpftool net"}},
	{Kind: kindBpftoolLink, Func: "parseBpftoolLinkShow", Parse: wrap(kindBpftoolLink, ParseBpftoolLinkShow), Result: typeOf[BpftoolLinks](),
		Doc:      "bpftool link show: BPF links (tcx shows as \"type 11\" in bpftool < 7.3)",
		Commands: []string{"bpftool link"}},
	{Kind: kindCgroupTree, Func: "parseBpftoolCgroupTree", Parse: wrap(kindCgroupTree, ParseCgroupTree), Result: typeOf[CgroupTree](), Records: "Programs",
		Doc:      "bpftool cgroup tree (or cgroup show PATH): programs per cgroup and hook; Hook(\"connect4\") finds socket LB",
		Commands: []string{"bpftool cgroup"}},
	{Kind: kindTCFilter, Func: "parseTCFilterShow", Parse: wrap(kindTCFilter, ParseTCFilterShow), Result: typeOf[TCFilters](), Records: "Filters",
		Doc:      "tc filter show dev X ingress|egress: filters; empty output means none",
		Commands: []string{"tc filter"}},
	{Kind: kindIPTables, Func: "parseIPTablesSave", Parse: wrap(kindIPTables, ParseIPTablesSave), Result: typeOf[IPTables](), Records: "Tables",
		Doc:      "iptables-save [-c]: tables, chains, rules; CountContaining() counts like grep -c",
		Commands: []string{"iptables-save", "ip6tables-save", "iptables-legacy-save", "iptables-nft-save"}},
	{Kind: kindSS, Func: "parseSS", Parse: wrap(kindSS, ParseSS), Result: typeOf[SocketList](),
		Doc:      "ss -tn / -tln [-H] [-p]: sockets with state, queues, addresses, process",
		Commands: []string{"ss"}},
	{Kind: kindNetstat, Func: "parseNetstat", Parse: wrap(kindNetstat, ParseNetstat), Result: typeOf[NetstatList](),
		Doc:      "netstat -tn / -tln (net-tools or busybox): connections",
		Commands: []string{"netstat", "busybox netstat"}},
	{Kind: kindCurl, Func: "parseCurl", Parse: wrap(kindCurl, ParseCurl), Result: typeOf[Curl](),
		Doc:      "curl -w '%{json}' or name=value lines (see CurlWriteOut): http code, timing, exit code",
		Commands: []string{"curl"}},
}

// Lookup returns the parser whose Kind is kind.
func Lookup(kind string) (Parser, bool) {
	for _, p := range All {
		if p.Kind == kind {
			return p, true
		}
	}
	return Parser{}, false
}
