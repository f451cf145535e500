package parse

import "testing"

func TestKindForCommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status --verbose": kindStatus,
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status --brief":   "",
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status -o json":   kindStatus,
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg version":          "",
		"cilium-dbg service list -o json":      kindServiceList,
		"cilium-dbg bpf lb list":               kindLBList,
		"cilium-dbg bpf ct list global":        kindCTList,
		"cilium-dbg endpoint get 1234 -o json": kindEndpointGet,
		"cilium-dbg endpoint list":             kindEndpointList,
		"cilium-dbg map list":                  kindMapList,
		"kubectl -n kube-system exec <agent> -c cilium-agent -- cilium-dbg bpf policy get -n <web's endpoint id>": kindPolicyGet,
		"cilium-dbg bpf policy get --all -o json": kindPolicyGet,
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- timeout 8 cilium-dbg monitor -j -n --type drop": kindMonitor,
		"cilium-dbg config -a": kindConfig,
		"kubectl -n kube-system exec ds/cilium -c cilium-agent -- hubble observe --follow -o jsonpb": kindHubble,
		"hubble status":                                                                       "",
		"node-exec tcpdump -l -n -i any":                                                      kindTcpdump,
		"node-exec tcpdump -l -n -i any -- tcp port 8080":                                     kindTcpdump,
		"sudo tcpdump -n -i cilium_wg0":                                                       kindTcpdump,
		"node-exec bpftool -j net show dev lxc1":                                              kindBpftoolNet,
		"node-exec bpftool link show":                                                         kindBpftoolLink,
		"node-exec tc filter show dev lxc1 ingress":                                           kindTCFilter,
		"node-exec iptables-save":                                                             kindIPTables,
		"node-exec ss -Htln 'sport = :30780'":                                                 kindSS,
		"kubectl -n cca-dp exec holder -- netstat -tn":                                        kindNetstat,
		"busybox netstat -tn":                                                                 kindNetstat,
		"kubectl -n cca-dp exec probe -- curl -sS -m 5 URL":                                   kindCurl,
		"kubectl -n cca-dp logs holder":                                                       "",
		"kubectl -n cca-dp get cep holder -o json":                                            "",
		"cilium bpf ct list global":                                                           kindCTList,
		"sudo nsenter -t 1 -n -- iptables-nft-save -c":                                        kindIPTables,
		"curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/healthz":       kindStatus,
		"curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/endpoint":      kindEndpointGet,
		"curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/endpoint/1635": kindEndpointGet,
		"curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/config":        "",
	} {
		eq(t, cmd, kindForCommand(cmd), want)
	}
}
