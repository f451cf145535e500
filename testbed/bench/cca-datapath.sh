#!/usr/bin/env bash
# Reference solution of the cca-datapath lab in bash, the way a careful lab
# author writes one today: kubectl, jq, grep/awk, and polling loops without
# sleeps (each try is one kubectl round trip, 0.1-0.2 s, which is the
# natural polling interval). It writes the same 8 files as
# playbooks/cca-datapath.yaml, with the same keys, values and types, and is
# idempotent like the playbook: apply with --server-side --force-conflicts,
# scale back to 2, reuse holder and probe.
#
# It does what the files need and nothing more: the playbook's cross-checks
# that read extra data only to assert (the EndpointSlices after the scale,
# netstat in the backend pod) are left out, which favours this script.
#
# Usage (from the repository root, on the test cluster):
#   testbed/bench/cca-datapath.sh OUTDIR
# Environment (defaults are the test cluster's):
#   KUBECTL, KUBECONFIG, NODE_EXEC (argv prefix for the node's shell; empty
#   on the lab VM itself), FIXTURES, PROBE_IMAGE; BENCH_WAITS: a file to
#   write the microseconds spent waiting for pods and holder's endpoint
#   into (the waits labrun's playbook does with `wait` steps), for testbed/bench/run
set -euo pipefail

out=${1:?usage: testbed/bench/cca-datapath.sh OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}
NODE_EXEC=${NODE_EXEC-/var/lib/labrun-testbed/bin/node-exec}
FIXTURES=${FIXTURES:-playbooks/cca-datapath/fixtures}
PROBE_IMAGE=${PROBE_IMAGE:-labrun.local/curl:7.88.1}

ns=cca-dp
replicas=2
scaled_replicas=4
node_port=30780
holder_port=40404

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "cca-datapath.sh: $*" >&2; exit 1; }
k() { "$KUBECTL" "$@"; }
agent() { k -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg "$@"; }
read -r -a node_exec <<<"$NODE_EXEC"
on_node() { "${node_exec[@]}" "$@"; }

# poll LIMIT CMD...: run CMD until it succeeds, at most LIMIT seconds.
poll() {
	local limit=$1 deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || die "timed out after ${limit}s: $*"
	done
}

# wait_for LIMIT CMD...: poll, for Kubernetes objects; its time is counted.
waited_us=0
wait_for() {
	local start=${EPOCHREALTIME/[.,]/}
	poll "$@"
	waited_us=$((waited_us + ${EPOCHREALTIME/[.,]/} - start))
}

# count TEXTFILE SUBSTR: lines containing SUBSTR (grep -c exits 1 on 0).
count() { grep -c -F -- "$2" "$1" || true; }
# Values of `cilium-dbg status [--verbose]` and `cilium-dbg config -a` output.
kpr() { awk '$1 == "KubeProxyReplacement:" { print $2; exit }' "$1"; }
coverage() { awk -F: '$1 ~ /^ *Socket LB Coverage$/ { gsub(/[[:space:]]/, "", $2); print $2; exit }' "$1"; }
no_backend() { awk -F' *: *' '$1 == "ServiceNoBackendResponse" { print $2; exit }' "$1"; }

# pods_ready N: exactly N web pods exist (terminating ones still count)
# and all are Ready; leaves them in $tmp/pods.json.
pods_ready() {
	k -n "$ns" get pods -l app=web -o json >"$tmp/pods.json" &&
		jq -e --argjson n "$1" '(.items | length) == $n and
			all(.items[]; any(.status.conditions[]?; .type == "Ready" and .status == "True"))' \
			"$tmp/pods.json" >/dev/null
}

# pod_ready NAME: the pod is Ready; leaves it in $tmp/NAME.json.
pod_ready() {
	k -n "$ns" get pod "$1" -o json >"$tmp/$1.json" 2>/dev/null &&
		jq -e 'any(.status.conditions[]?; .type == "Ready" and .status == "True")' "$tmp/$1.json" >/dev/null
}

# jq definitions for `cilium-dbg service list -o json`: services is the
# list flattened as the playbook's parser reads it (status.realized, what
# the datapath has; flags from spec if missing); entries the frontends of
# one Service of one type; web the ClusterIP:80 frontend of web.
# shellcheck disable=SC2016 # jq's $variables, not the shell's
jqdefs='
def services: [.[] | (.status.realized // .spec) as $r | $r + {flags: ($r.flags // .spec.flags)}];
def entries($ns; $name; $type): [services[] | select(.flags.namespace == $ns and .flags.name == $name and .flags.type == $type)];
def web($ns): [entries($ns; "web"; "ClusterIP")[] | select(.["frontend-address"].port == 80)];
'

# lb_slots FILE FRONTEND: backend addresses in FRONTEND's slots 1..N of
# `bpf lb list` (rows "VIP:80/TCP (slot)   10.42.0.9:8080/TCP (revnat) (slot)").
lb_slots() {
	awk -v fe="$2/TCP" '$1 == fe && $2 != "(0)" && $3 ~ /^[0-9]/ { sub(/\/[A-Z]+$/, "", $3); print $3 }' "$1"
}
# lb_has N: web's frontend has N backend slots; leaves the list in $tmp/lb.
lb_has() {
	agent bpf lb list >"$tmp/lb" && [ "$(lb_slots "$tmp/lb" "$frontend" | wc -l)" -eq "$1" ]
}

# ---- 1. iptables.json ------------------------------------------------------
k apply --server-side --force-conflicts -f "$FIXTURES/web.yaml" >/dev/null
wait_for 180 pods_ready "$replicas"
cp "$tmp/pods.json" "$tmp/web_pods.json"
cluster_ip=$(k -n "$ns" get svc web -o jsonpath='{.spec.clusterIP}')
frontend=$cluster_ip:80
on_node iptables-save >"$tmp/iptables"
agent status >"$tmp/status"
jq -n --arg ip "$cluster_ip" \
	--argjson kube_svc "$(count "$tmp/iptables" KUBE-SVC)" \
	--argjson ip_lines "$(count "$tmp/iptables" "$cluster_ip")" \
	--argjson cilium "$(count "$tmp/iptables" CILIUM)" \
	--arg kpr "$(kpr "$tmp/status")" \
	'{cluster_ip: $ip, kube_svc_lines: $kube_svc, cluster_ip_lines: $ip_lines, cilium_lines: $cilium, kube_proxy_replacement: $kpr}' \
	>"$out/iptables.json"

# ---- 2. svc.json -------------------------------------------------------------
web_in_agent() {
	agent service list -o json >"$tmp/services.json" &&
		jq -e --arg ns "$ns" --argjson n "$replicas" "$jqdefs"'web($ns) |
			length == 1 and (.[0]["backend-addresses"] // [] | length == $n and all(.state == "active"))' \
			"$tmp/services.json" >/dev/null
}
poll 60 web_in_agent
poll 60 lb_has "$replicas"
# The pods svc.json is about: the oldest (in a solve, all of them).
jq -n --arg ns "$ns" --arg fe "$frontend" --argjson n "$replicas" \
	--slurpfile s "$tmp/services.json" --slurpfile p "$tmp/web_pods.json" \
	"$jqdefs"'($s[0] | web($ns)[0]) as $e |
	($p[0].items | sort_by(.metadata.creationTimestamp) | .[:$n]) as $first |
	{service_id: $e.id, frontend: $fe,
	 backends: [$e["backend-addresses"][] | select(.ip as $ip | any($first[]; .status.podIP == $ip)) | "\(.ip):\(.port)"] | sort,
	 backend_pods: [$first[].metadata.name] | sort}' >"$out/svc.json"
jq -e --argjson n "$replicas" '(.backends | length) == $n' "$out/svc.json" >/dev/null ||
	die "svc.json: web should have $replicas backends"

# ---- 3. scale.json -----------------------------------------------------------
k -n "$ns" scale deploy/web --replicas="$scaled_replicas" >/dev/null
wait_for 180 pods_ready "$scaled_replicas"
cp "$tmp/pods.json" "$tmp/scaled_pods.json"
poll 60 lb_has "$scaled_replicas"
lb_slots "$tmp/lb" "$frontend" | jq -R . | jq -s --slurpfile svc "$out/svc.json" \
	'sort as $b | {backends: $b, new_backends: ($b - $svc[0].backends)}' >"$out/scale.json"

# ---- 4. ct.json --------------------------------------------------------------
# holder's connection as its log, its socket and the conntrack table show
# it, each polled until settled: holder reconnects when its backend goes
# away, and the entries of a closed connection linger in conntrack.
holder_logged() { k -n "$ns" logs holder >"$tmp/holder.log" && tail -n 1 "$tmp/holder.log" | grep -q 'peer='; }
# established: holder's ESTABLISHED sockets on the port, in $tmp/netstat.
established() { awk -v p=":$holder_port" '$6 == "ESTABLISHED" && substr($4, length($4) - length(p) + 1) == p { print $5 }' "$tmp/netstat"; }
holder_socket() { k -n "$ns" exec holder -- netstat -tn >"$tmp/netstat" && [ "$(established | wc -l)" -eq 1 ]; }
# ct_out: the destination of holder's live connection in $tmp/ct: of its open
# TCP OUT entries, the most recently refreshed (largest expires=); an earlier
# one whose end conntrack did not see can linger from the same port.
ct_out() {
	awk -v src="$client" '$1 == "TCP" && $2 == "OUT" && $3 == src && !/RxClosing|TxClosing/ { split($6, e, "="); print e[2], $5 }' "$tmp/ct" |
		sort -rn | head -n 1 | cut -d' ' -f2
}
ct_has() { agent bpf ct list global >"$tmp/ct" && [ -n "$(ct_out)" ]; }
# holder_connection: sets app_peer, socket_peer, backend and svc_entries.
holder_connection() {
	poll 60 holder_logged
	poll 60 holder_socket
	poll 60 ct_has
	app_peer=$(grep -o 'peer=[^[:space:]]*' "$tmp/holder.log" | tail -n 1 | cut -d= -f2)
	socket_peer=$(established)
	backend=$(ct_out)
	svc_entries=$(awk -v p=":$holder_port" 'function port(a) { return substr(a, length(a) - length(p) + 1) == p }
		$1 == "TCP" && $2 == "SVC" && (port($3) || port($5))' "$tmp/ct" | wc -l)
}
# write_ct_json PODS_JSON STATUS_VERBOSE
write_ct_json() {
	jq -n --arg client "$client" --arg app_peer "$app_peer" --arg socket_peer "$socket_peer" --arg backend "$backend" \
		--arg pod "$(jq -r --arg ip "${backend%:*}" '.items[] | select(.status.podIP == $ip) | .metadata.name' "$1")" \
		--argjson svc_entries "$svc_entries" \
		--arg coverage "$(coverage "$2")" \
		'{client: $client, app_peer: $app_peer, socket_peer: $socket_peer, backend: $backend, backend_pod: $pod,
		  svc_entries: $svc_entries, socket_lb_coverage: $coverage}' >"$out/ct.json"
	jq -e '.socket_peer == .backend and .backend_pod != ""' "$out/ct.json" >/dev/null ||
		die "ct.json: holder's socket should be connected to a web pod, the conntrack backend"
}
k apply --server-side --force-conflicts -f "$FIXTURES/holder.yaml" >/dev/null
wait_for 120 pod_ready holder
client=$(jq -r .status.podIP "$tmp/holder.json"):$holder_port
holder_connection
agent status --verbose >"$tmp/status_verbose"
write_ct_json "$tmp/scaled_pods.json" "$tmp/status_verbose"

# ---- 5. prog.json ------------------------------------------------------------
cep_has_id() {
	ep_id=$(k -n "$ns" get ciliumendpoints.cilium.io holder -o jsonpath='{.status.id}' 2>/dev/null) && [ -n "$ep_id" ]
}
wait_for 60 cep_has_id
agent endpoint get "$ep_id" -o json >"$tmp/endpoint.json"
iface=$(jq -r '.[0].status.networking["interface-name"]' "$tmp/endpoint.json")
ifindex=$(jq -r '.[0].status.networking["interface-index"]' "$tmp/endpoint.json")
# "lxc...(108) tcx/ingress cil_from_container prog_id 746 link_id 82"
read -r attach program bpftool_ifindex < <(on_node bpftool net show dev "$iface" |
	awk -v dev="$iface" 'index($1, dev "(") == 1 && $2 ~ /\/ingress$/ { i = substr($1, length(dev) + 2); sub(/\).*/, "", i); print $2, $3, i }') ||
	die "bpftool should show one ingress program on $iface"
program=${program%"-$iface"}
[ "$bpftool_ifindex" = "$ifindex" ] || die "bpftool's ifindex $bpftool_ifindex should be the endpoint's $ifindex"
tc_lines=$(on_node tc filter show dev "$iface" ingress | grep -c '' || true)
policy_map=$(printf 'cilium_policy_v3_%05d' "$ep_id")
agent map list | awk -v m="$policy_map" '$1 == m { found = 1 } END { exit !found }' ||
	die "cilium-dbg map list has no $policy_map"
jq -n --argjson id "$ep_id" --arg iface "$iface" --argjson ifindex "$ifindex" --arg attach "$attach" \
	--arg program "$program" --arg policy_map "$policy_map" --argjson tc "$tc_lines" \
	'{endpoint_id: $id, interface: $iface, ifindex: $ifindex, attach: $attach, program: $program,
	  policy_map: $policy_map, tc_filter_lines: $tc}' >"$out/prog.json"

# ---- 6. nodeport.json --------------------------------------------------------
k apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: web-np, namespace: $ns}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080, nodePort: $node_port, protocol: TCP}]
EOF
node_ip=$(k get nodes -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')
np_answers() { [ "$(on_node curl -s -o /dev/null -m 5 -w '%{http_code}' "http://$node_ip:$node_port/")" = 200 ]; }
poll 60 np_answers
on_node iptables-save >"$tmp/iptables_np"
listen=$(on_node ss -Htln "sport = :$node_port" | grep -c '' || true)
np_id=$(agent service list -o json | jq --argjson port "$node_port" "$jqdefs"'
	[services[] | select(.["frontend-address"].ip == "0.0.0.0" and .["frontend-address"].port == $port and .flags.type == "NodePort")][0].id')
[ "$np_id" != null ] || die "the agent should list a NodePort frontend 0.0.0.0:$node_port"
jq -n --arg ip "$node_ip" --argjson port "$node_port" --argjson ipt "$(count "$tmp/iptables_np" "$node_port")" \
	--argjson listen "$listen" --argjson id "$np_id" \
	'{node_ip: $ip, node_port: $port, http_code: 200, iptables_lines: $ipt, listen_sockets: $listen, service_id: $id}' \
	>"$out/nodeport.json"

# ---- 7. ghost.json -----------------------------------------------------------
k apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: ghost, namespace: $ns}
spec:
  selector: {app: ghost}
  ports: [{port: 80, targetPort: 8080, protocol: TCP}]
---
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: $ns, labels: {app: probe}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: probe
    image: $PROBE_IMAGE
    imagePullPolicy: IfNotPresent
    command: [sleep, "86400"]
EOF
wait_for 180 pod_ready probe
ghost_ip=$(k -n "$ns" get svc ghost -o jsonpath='{.spec.clusterIP}')
ghost_in_agent() {
	agent service list -o json >"$tmp/services_ghost.json" &&
		jq -e --arg ns "$ns" "$jqdefs"'any(services[]; .flags.namespace == $ns and .flags.name == "ghost")' \
			"$tmp/services_ghost.json" >/dev/null
}
poll 60 ghost_in_agent
curl_exit=0
k -n "$ns" exec probe -- curl -s -o /dev/null -m 5 -w 'time_total=%{time_total}\n' "http://$ghost_ip:80/" \
	>"$tmp/ghost_curl" 2>/dev/null || curl_exit=$?
[ "$curl_exit" -ne 0 ] || die "curl to a Service without backends should fail"
seconds=$(sed -n 's/^time_total=//p' "$tmp/ghost_curl")
agent config -a >"$tmp/config"
jq -n --arg ip "$ghost_ip" --argjson exit "$curl_exit" --argjson seconds "$seconds" --arg nbr "$(no_backend "$tmp/config")" \
	--arg ns "$ns" --slurpfile s "$tmp/services_ghost.json" \
	"$jqdefs"'{cluster_ip: $ip, backends: ($s[0] | entries($ns; "ghost"; "ClusterIP")[0]["backend-addresses"] // [] | length),
	  curl_exit: $exit, seconds: $seconds, no_backend_response: $nbr}' >"$out/ghost.json"

# ---- 8. report.txt: everything re-read from the current state -----------------
agent status --verbose >"$tmp/status_now"
agent bpf lb list >"$tmp/lb_now"
client=$(k -n "$ns" get pod holder -o jsonpath='{.status.podIP}'):$holder_port
holder_connection
on_node iptables-save >"$tmp/iptables_now"
agent config -a >"$tmp/config_now"
# holder reconnected to another backend since section 4: ct.json again
if ! jq -e --arg client "$client" --arg backend "$backend" '.client == $client and .backend == $backend' "$out/ct.json" >/dev/null; then
	k -n "$ns" get pods -l app=web -o json >"$tmp/web_pods_now.json"
	write_ct_json "$tmp/web_pods_now.json" "$tmp/status_now"
fi
{
	echo "kube_proxy_replacement=$(kpr "$tmp/status_now")"
	echo "socket_lb_coverage=$(coverage "$tmp/status_now")"
	echo "web_backends=$(lb_slots "$tmp/lb_now" "$frontend" | wc -l)"
	echo "holder_backend=$backend"
	echo "holder_program=$program"
	echo "nodeport_iptables_lines=$(count "$tmp/iptables_now" "$node_port")"
	echo "ghost_no_backend_response=$(no_backend "$tmp/config_now")"
} >"$out/report.txt"
[ -z "${BENCH_WAITS:-}" ] || echo "$waited_us" >"$BENCH_WAITS"
