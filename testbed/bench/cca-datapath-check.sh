#!/usr/bin/env bash
# Check of the cca-datapath lab in bash, the way a careful lab author writes
# a grader today: it reads the cluster's current state once per source
# (kubectl, jq, grep/awk, cilium-dbg through kubectl exec, node commands
# through the node's shell), one read after another, derives every value
# the 8 lab files must hold, and compares each file with them key by key.
# It changes nothing, like `labrun check playbooks/cca-datapath.yaml`, which
# it is measured against (testbed/bench/run's check section).
#
# It grades what labrun check grades: the same 8 files, the same keys and
# values, ghost.json's seconds by type only, svc.json about the two oldest
# web pods. Each source is read once even where the playbook reads it
# twice (iptables-save, the service list, status --verbose, config -a),
# which favours this script.
#
# Usage (from the repository root, on the test cluster, after a solve):
#   testbed/bench/cca-datapath-check.sh OUTDIR
# Prints one line per file (ok or FAIL with the differing keys) and exits 1
# when a file is missing or differs. Environment as testbed/bench/cca-datapath.sh:
# KUBECTL, KUBECONFIG, NODE_EXEC.
set -euo pipefail

out=${1:?usage: testbed/bench/cca-datapath-check.sh OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}
NODE_EXEC=${NODE_EXEC-/var/lib/labrun-testbed/bin/node-exec}

ns=cca-dp
replicas=2
node_port=30780
holder_port=40404

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

k() { "$KUBECTL" "$@"; }
agent() { k -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg "$@"; }
read -r -a node_exec <<<"$NODE_EXEC"
on_node() { "${node_exec[@]}" "$@"; }
count() { grep -c -F -- "$2" "$1" || true; }
kpr() { awk '$1 == "KubeProxyReplacement:" { print $2; exit }' "$1"; }
coverage() { awk -F: '$1 ~ /^ *Socket LB Coverage$/ { gsub(/[[:space:]]/, "", $2); print $2; exit }' "$1"; }
no_backend() { awk -F' *: *' '$1 == "ServiceNoBackendResponse" { print $2; exit }' "$1"; }
# shellcheck disable=SC2016 # jq's $variables, not the shell's
jqdefs='
def services: [.[] | (.status.realized // .spec) as $r | $r + {flags: ($r.flags // .spec.flags)}];
def entries($ns; $name; $type): [services[] | select(.flags.namespace == $ns and .flags.name == $name and .flags.type == $type)];
def web($ns): [entries($ns; "web"; "ClusterIP")[] | select(.["frontend-address"].port == 80)];
'
lb_slots() {
	awk -v fe="$2/TCP" '$1 == fe && $2 != "(0)" && $3 ~ /^[0-9]/ { sub(/\/[A-Z]+$/, "", $3); print $3 }' "$1"
}

# ---- every source, read once --------------------------------------------------
k -n "$ns" get svc web ghost -o json >"$tmp/svcs.json"
k -n "$ns" get pods -o json >"$tmp/pods.json"
k get nodes -o json >"$tmp/nodes.json"
on_node iptables-save >"$tmp/iptables"
agent status --verbose >"$tmp/status"
agent service list -o json >"$tmp/services.json"
agent bpf lb list >"$tmp/lb"
agent bpf ct list global >"$tmp/ct"
agent config -a >"$tmp/config"
agent map list >"$tmp/maps"
k -n "$ns" logs holder >"$tmp/holder.log"
k -n "$ns" exec holder -- netstat -tn >"$tmp/netstat"
ep_id=$(k -n "$ns" get ciliumendpoints.cilium.io holder -o jsonpath='{.status.id}')
agent endpoint get "$ep_id" -o json >"$tmp/endpoint.json"
iface=$(jq -r '.[0].status.networking["interface-name"]' "$tmp/endpoint.json")
ifindex=$(jq -r '.[0].status.networking["interface-index"]' "$tmp/endpoint.json")
on_node bpftool net show dev "$iface" >"$tmp/bpftool"
on_node tc filter show dev "$iface" ingress >"$tmp/tc"
node_ip=$(jq -r '.items[0].status.addresses[] | select(.type == "InternalIP") | .address' "$tmp/nodes.json")
http_code=$(on_node curl -s -o /dev/null -m 5 -w '%{http_code}' "http://$node_ip:$node_port/" || true)
listen=$(on_node ss -Htln "sport = :$node_port" | grep -c '' || true)
ghost_ip=$(jq -r '.items[] | select(.metadata.name == "ghost") | .spec.clusterIP' "$tmp/svcs.json")
curl_exit=0
k -n "$ns" exec probe -- curl -s -o /dev/null -m 5 -w 'time_total=%{time_total}\n' "http://$ghost_ip:80/" \
	>"$tmp/ghost_curl" 2>/dev/null || curl_exit=$?

# ---- the values the files must hold ---------------------------------------------
cluster_ip=$(jq -r '.items[] | select(.metadata.name == "web") | .spec.clusterIP' "$tmp/svcs.json")
frontend=$cluster_ip:80
holder_ip=$(jq -r '.items[] | select(.metadata.name == "holder") | .status.podIP' "$tmp/pods.json")
client=$holder_ip:$holder_port
app_peer=$(grep -o 'peer=[^[:space:]]*' "$tmp/holder.log" | tail -n 1 | cut -d= -f2 || true)
socket_peer=$(awk -v p=":$holder_port" '$6 == "ESTABLISHED" && substr($4, length($4) - length(p) + 1) == p { print $5 }' "$tmp/netstat")
backend=$(awk -v src="$client" '$1 == "TCP" && $2 == "OUT" && $3 == src && !/RxClosing|TxClosing/ { split($6, e, "="); print e[2], $5 }' "$tmp/ct" |
	sort -rn | head -n 1 | cut -d' ' -f2 || true)
svc_entries=$(awk -v p=":$holder_port" 'function port(a) { return substr(a, length(a) - length(p) + 1) == p }
	$1 == "TCP" && $2 == "SVC" && (port($3) || port($5))' "$tmp/ct" | wc -l)
read -r attach program < <(awk -v dev="$iface" 'index($1, dev "(") == 1 && $2 ~ /\/ingress$/ { print $2, $3 }' "$tmp/bpftool") || true
program=${program%"-$iface"}
policy_map=$(printf 'cilium_policy_v3_%05d' "$ep_id")
awk -v m="$policy_map" '$1 == m { found = 1 } END { exit !found }' "$tmp/maps" || policy_map=""
np_id=$(jq --argjson port "$node_port" "$jqdefs"'
	[services[] | select(.["frontend-address"].ip == "0.0.0.0" and .["frontend-address"].port == $port and .flags.type == "NodePort")][0].id' "$tmp/services.json")

declare -A want
want[iptables.json]=$(jq -n --arg ip "$cluster_ip" --argjson kube_svc "$(count "$tmp/iptables" KUBE-SVC)" \
	--argjson ip_lines "$(count "$tmp/iptables" "$cluster_ip")" --argjson cilium "$(count "$tmp/iptables" CILIUM)" \
	--arg kpr "$(kpr "$tmp/status")" \
	'{cluster_ip: $ip, kube_svc_lines: $kube_svc, cluster_ip_lines: $ip_lines, cilium_lines: $cilium, kube_proxy_replacement: $kpr}')
want[svc.json]=$(jq -n --arg ns "$ns" --arg fe "$frontend" --argjson n "$replicas" \
	--slurpfile s "$tmp/services.json" --slurpfile p "$tmp/pods.json" \
	"$jqdefs"'($s[0] | web($ns)[0]) as $e |
	([$p[0].items[] | select(.metadata.labels.app == "web")] | sort_by(.metadata.creationTimestamp) | .[:$n]) as $first |
	{service_id: $e.id, frontend: $fe,
	 backends: [$e["backend-addresses"][] | select(.ip as $ip | any($first[]; .status.podIP == $ip)) | "\(.ip):\(.port)"] | sort,
	 backend_pods: [$first[].metadata.name] | sort}')
want[scale.json]=$(lb_slots "$tmp/lb" "$frontend" | jq -R . | jq -s --argjson svc "${want[svc.json]}" \
	'sort as $b | {backends: $b, new_backends: ($b - $svc.backends)}')
want[ct.json]=$(jq -n --arg client "$client" --arg app_peer "$app_peer" --arg socket_peer "$socket_peer" --arg backend "$backend" \
	--arg pod "$(jq -r --arg ip "${backend%:*}" '.items[] | select(.status.podIP == $ip) | .metadata.name' "$tmp/pods.json")" \
	--argjson svc_entries "$svc_entries" --arg coverage "$(coverage "$tmp/status")" \
	'{client: $client, app_peer: $app_peer, socket_peer: $socket_peer, backend: $backend, backend_pod: $pod,
	  svc_entries: $svc_entries, socket_lb_coverage: $coverage}')
want[prog.json]=$(jq -n --argjson id "$ep_id" --arg iface "$iface" --argjson ifindex "$ifindex" --arg attach "$attach" \
	--arg program "$program" --arg policy_map "$policy_map" --argjson tc "$(grep -c '' "$tmp/tc" || true)" \
	'{endpoint_id: $id, interface: $iface, ifindex: $ifindex, attach: $attach, program: $program,
	  policy_map: $policy_map, tc_filter_lines: $tc}')
want[nodeport.json]=$(jq -n --arg ip "$node_ip" --argjson port "$node_port" --argjson code "${http_code:-0}" \
	--argjson ipt "$(count "$tmp/iptables" "$node_port")" --argjson listen "$listen" --argjson id "$np_id" \
	'{node_ip: $ip, node_port: $port, http_code: $code, iptables_lines: $ipt, listen_sockets: $listen, service_id: $id}')
want[ghost.json]=$(jq -n --arg ip "$ghost_ip" --argjson exit "$curl_exit" --arg nbr "$(no_backend "$tmp/config")" \
	--arg ns "$ns" --slurpfile s "$tmp/services.json" \
	"$jqdefs"'{cluster_ip: $ip, backends: ($s[0] | entries($ns; "ghost"; "ClusterIP")[0]["backend-addresses"] // [] | length),
	  curl_exit: $exit, seconds: 0, no_backend_response: $nbr}')
report=$(printf '%s\n' \
	"kube_proxy_replacement=$(kpr "$tmp/status")" \
	"socket_lb_coverage=$(coverage "$tmp/status")" \
	"web_backends=$(lb_slots "$tmp/lb" "$frontend" | wc -l)" \
	"holder_backend=$backend" \
	"holder_program=$program" \
	"nodeport_iptables_lines=$(count "$tmp/iptables" "$node_port")" \
	"ghost_no_backend_response=$(no_backend "$tmp/config")")

# ---- compare ----------------------------------------------------------------------
failed=0
for f in iptables.json svc.json scale.json ct.json prog.json nodeport.json ghost.json; do
	if [ ! -f "$out/$f" ]; then
		echo "FAIL $f: missing"
		failed=1
		continue
	fi
	# keys whose values differ (seconds: by type only); lists compare sorted
	diff=$(jq -r --argjson want "${want[$f]}" '
		def norm: if type == "array" then sort else . end;
		. as $got | ([$want | keys_unsorted[]] + [$got | keys_unsorted[]] | unique)[] |
		select(if . == "seconds" then ($got[.] | type) != ($want[.] | type)
		       else ($got[.] | norm) != ($want[.] | norm) end)' "$out/$f")
	if [ -n "$diff" ]; then
		echo "FAIL $f:" $diff
		failed=1
	else
		echo "ok   $f"
	fi
done
if [ "$(cat "$out/report.txt" 2>/dev/null)" = "$report" ]; then
	echo "ok   report.txt"
else
	echo "FAIL report.txt"
	failed=1
fi
exit "$failed"
