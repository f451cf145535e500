#!/usr/bin/env bash
# Reference solution of the cca-services lab in bash, the way a careful lab
# author writes one today: kubectl, jq, grep/awk, cilium-dbg through kubectl
# exec, helm in node 1's shell, curl on the outside client, and polling
# loops without sleeps (each try is one round trip). It writes the same 9
# files as playbooks/cca-services.yaml, with the same keys, values and
# types, and is idempotent like the playbook: apply with --server-side
# --force-conflicts, scale back to 3, reuse client and remote. The Helm
# release is rolled back on any exit after the upgrade (an EXIT trap, the
# playbook's finally).
#
# It does what the files need and nothing more: the playbook's cross-checks
# that read extra data only to assert (the reverse_sk and affinity maps,
# helm get values after the rollback) are left out, which favours this
# script.
#
# Usage (from the repository root, on the two-node test cluster):
#   testbed/bench/cca-services.sh OUTDIR
# Environment (defaults are the test cluster's):
#   KUBECTL, KUBECONFIG, NODE_EXEC (argv prefix for node 1's shell; empty on
#   the lab VM itself), OUTSIDE_EXEC (the outside client's), FIXTURES, IMAGE,
#   CHART (helm's chart argument); BENCH_WAITS: a file to write the
#   microseconds spent waiting for pods and the DaemonSet rollouts into, for testbed/bench/run
set -euo pipefail

out=${1:?usage: testbed/bench/cca-services.sh OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}
NODE_EXEC=${NODE_EXEC-/var/lib/labrun-testbed/bin/node-exec}
OUTSIDE_EXEC=${OUTSIDE_EXEC-/var/lib/labrun-testbed/bin/outside-exec}
FIXTURES=${FIXTURES:-playbooks/cca-services/fixtures}
IMAGE=${IMAGE:-labrun.local/python:3.11.2}
CHART=${CHART:-/var/cache/labrun-testbed/cilium-src-v1.20.1/cilium}

ns=cca-svc
replicas=3
scaled_replicas=4
requests=10
node_port=32334
np_port=30880
local_port=30881

mkdir -p "$out"
tmp=$(mktemp -d)
rollback_to=
cleanup() {
	if [ -n "$rollback_to" ]; then
		on_node helm rollback cilium "$rollback_to" -n kube-system >&2 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

die() { echo "cca-services.sh: $*" >&2; exit 1; }
k() { "$KUBECTL" "$@"; }
# agent ARGS: cilium-dbg in node 1's agent, the one whose maps the lab reads
# (ds/cilium would pick either node's); agent_pod is set once the nodes are
# known and again after each rollout of the agents.
agent() { k -n kube-system exec "$agent_pod" -c cilium-agent -- cilium-dbg "$@"; }
node1_agent() { k -n kube-system get pods -l k8s-app=cilium --field-selector spec.nodeName="$node1" -o name; }
read -r -a node_exec <<<"$NODE_EXEC"
read -r -a outside_exec <<<"$OUTSIDE_EXEC"
on_node() { "${node_exec[@]}" "$@"; }
outside() { "${outside_exec[@]}" "$@"; }

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
count() { grep -c -F -- "$2" "$1" || true; }
# kpr_field FILE LABEL: the value of "  LABEL:   value" in status --verbose.
kpr_field() { awk -v l="$2:" '{ line = $0; sub(/^ +/, "", line) } index(line, l) == 1 { sub(/^[^:]*: */, "", line); sub(/ +$/, "", line); print line; exit }' "$1"; }
mode() { kpr_field "$1" "Mode"; }
first_word() { awk '{ print $1 }'; }

# ---- fixtures, nodes ---------------------------------------------------------
k apply --server-side --force-conflicts -f "$FIXTURES/services.yaml" >/dev/null
k get nodes -o json >"$tmp/nodes.json"
on_node ip -4 -o addr show | awk '{ split($4, a, "/"); print a[1] }' >"$tmp/own"
own_json=$(jq -R . "$tmp/own" | jq -s -c .)
node1=$(jq -r --argjson own "$own_json" '.items[] | select(any(.status.addresses[]; .type == "InternalIP" and (.address as $a | $own | index($a)))) | .metadata.name' "$tmp/nodes.json")
node2=$(jq -r --argjson own "$own_json" '.items[] | select(any(.status.addresses[]; .type == "InternalIP" and (.address as $a | $own | index($a))) | not) | .metadata.name' "$tmp/nodes.json")
ip_of() { jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .status.addresses[] | select(.type == "InternalIP") | .address' "$tmp/nodes.json"; }
node1_ip=$(ip_of "$node1")
node2_ip=$(ip_of "$node2")
[ -n "$node1" ] && [ -n "$node2" ] || die "need two nodes, one of them this shell's"
agent_pod=$(node1_agent)

k apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: $ns, labels: {app: client}}
spec:
  nodeName: $node1
  terminationGracePeriodSeconds: 1
  containers:
  - name: client
    image: $IMAGE
    imagePullPolicy: IfNotPresent
    command: [python3, -c, "import time; time.sleep(10**8)"]
    volumeMounts: [{name: scripts, mountPath: /scripts}]
  volumes: [{name: scripts, configMap: {name: lab-scripts}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: remote, namespace: $ns, labels: {app: remote}}
spec:
  replicas: 1
  selector: {matchLabels: {app: remote}}
  template:
    metadata: {labels: {app: remote}}
    spec:
      nodeName: $node2
      terminationGracePeriodSeconds: 1
      containers:
      - name: remote
        image: $IMAGE
        imagePullPolicy: IfNotPresent
        command: [python3, /scripts/http_server.py, "80"]
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 1}
        volumeMounts: [{name: scripts, mountPath: /scripts}]
      volumes: [{name: scripts, configMap: {name: lab-scripts}}]
EOF
outside_ip=$(outside ip -4 -o route get "$node1_ip" | grep -o 'src [0-9.]*' | cut -d' ' -f2)
cluster_ip=$(k -n "$ns" get svc nginx-service -o jsonpath='{.spec.clusterIP}')
frontend=$cluster_ip:8080

# pods_ready SELECTOR N: exactly N pods (terminating ones count), all Ready.
pods_ready() {
	k -n "$ns" get pods -l "$1" -o json >"$tmp/pods.json" &&
		jq -e --argjson n "$2" '(.items | length) == $n and
			all(.items[]; any(.status.conditions[]?; .type == "Ready" and .status == "True"))' "$tmp/pods.json" >/dev/null
}
wait_for 180 pods_ready app=nginx "$replicas"
wait_for 180 pods_ready "app in (client,echo-udp,remote)" 3
client_ip=$(k -n "$ns" get pod client -o jsonpath='{.status.podIP}')

# nginx_in_agent N: the agent lists nginx-service's ClusterIP with N active backends.
nginx_in_agent() {
	agent service list -o json >"$tmp/services.json" &&
		jq -e --arg ns "$ns" --argjson n "$1" '[.[] | .status.realized // .spec | select(.flags.namespace == $ns and .flags.name == "nginx-service"
			and .flags.type == "ClusterIP" and .["frontend-address"].port == 8080)] |
			length == 1 and (.[0]["backend-addresses"] // [] | length == $n and all(.state == "active"))' "$tmp/services.json" >/dev/null
}
# fe_count N: slot 0 of the frontend holds count N (bpf lb list --frontends:
# "VIP:8080/TCP (0)   0 3[0] (5) [0x.. 0x..]"); leaves the rows in $tmp/fes.
fe_count() {
	agent bpf lb list --frontends >"$tmp/fes" &&
		[ "$(awk -v fe="$frontend/TCP" '$1 == fe && $2 == "(0)" { sub(/\[.*/, "", $4); print $4 }' "$tmp/fes")" = "$1" ]
}
poll 60 nginx_in_agent "$replicas"
poll 60 fe_count "$replicas"

# ---- 1. kpr.json ---------------------------------------------------------------
agent status --verbose >"$tmp/status"
on_node iptables-save >"$tmp/iptables"
jq -n --arg kpr "$(kpr_field "$tmp/status" Status)" --arg slb "$(kpr_field "$tmp/status" "Socket LB")" \
	--arg aff "$(kpr_field "$tmp/status" "Session Affinity")" \
	--arg np "$(kpr_field "$tmp/status" "- NodePort" | first_word)" --arg hp "$(kpr_field "$tmp/status" "- HostPort" | first_word)" \
	--arg eip "$(kpr_field "$tmp/status" "- externalIPs" | first_word)" \
	--argjson kp "$(k get pods -A -l k8s-app=kube-proxy -o name | wc -l)" \
	--argjson svc "$(count "$tmp/iptables" KUBE-SVC)" \
	--argjson chains "$(grep -c '^:CILIUM_' "$tmp/iptables" || true)" \
	'{kube_proxy_replacement: $kpr, socket_lb: $slb, session_affinity: $aff, nodeport: $np, host_port: $hp, external_ips: $eip,
	  kube_proxy_pods: $kp, kube_svc_lines: $svc, cilium_chains: $chains}' >"$out/kpr.json"

# ---- 2. lbmap.json -------------------------------------------------------------
agent bpf lb list >"$tmp/lb"
agent bpf lb list --revnat >"$tmp/revnat"
# slot_ids FRONTEND: backend ids of slots 1..count in $tmp/fes.
slot_ids() {
	awk -v fe="$1/TCP" '$1 == fe && $2 == "(0)" { sub(/\[.*/, "", $4); n = $4 }
		$1 == fe && $2 != "(0)" { s = $2; gsub(/[()]/, "", s); id[s] = $3 }
		END { for (i = 1; i <= n; i++) print id[i] }' "$tmp/fes" | sort -n
}
ids=$(slot_ids "$frontend" | jq -R 'tonumber' | jq -s -c .)
service_id=$(jq -r --arg ns "$ns" '.[] | .status.realized // .spec | select(.flags.namespace == $ns and .flags.name == "nginx-service"
	and .flags.type == "ClusterIP" and .["frontend-address"].port == 8080) | .id' "$tmp/services.json")
# NodePort frontends of the map on port 32334 (0.0.0.0 and per node IP), each
# with the same backend ids as the ClusterIP?
shares=true
np_fes=$(awk -v p=":$node_port/TCP" '$2 == "(0)" && index($1, p) && substr($1, length($1) - length(p) + 1) == p { print $1 }' "$tmp/fes" | sed 's|/TCP$||' | sort -u)
[ -n "$np_fes" ] || shares=false
for f in $np_fes; do
	[ "$(slot_ids "$f" | jq -R 'tonumber' | jq -s -c 'sort')" = "$(echo "$ids" | jq -c sort)" ] || shares=false
done
jq -n --argjson id "$service_id" --arg fe "$frontend" --argjson ids "$ids" --argjson shares "$shares" \
	--argjson rows "$(awk -v fe="$frontend/TCP" '$1 == fe' "$tmp/lb" | wc -l)" \
	--argjson count "$(awk -v fe="$frontend/TCP" '$1 == fe && $2 == "(0)" { sub(/\[.*/, "", $4); print $4 }' "$tmp/fes")" \
	--arg rev "$(awk -v id="$service_id" '$1 == id { print $2 }' "$tmp/revnat")" \
	--slurpfile s "$tmp/services.json" --arg ns "$ns" --argjson np "$node_port" \
	--arg slots "$(awk -v fe="$frontend/TCP" '$1 == fe && $2 != "(0)" { sub(/\/[A-Z]+$/, "", $3); print $3 }' "$tmp/lb")" \
	'($s[0] | [.[] | .status.realized // .spec]) as $svcs |
	 {service_id: $id, frontend: $fe,
	  backends: [$svcs[] | select(.flags.namespace == $ns and .flags.name == "nginx-service" and .flags.type == "ClusterIP" and .["frontend-address"].port == 8080)
	    | .["backend-addresses"][] | "\(.ip):\(.port)"] | sort,
	  lb_list_rows: $rows, master_count: $count, backend_ids: $ids,
	  backend_map_addrs: ($slots | split("\n") | map(select(. != "")) | sort),
	  rev_nat_id: $id, rev_nat_address: $rev,
	  nodeport_frontends: [$svcs[] | select(.flags.type == "NodePort" and .["frontend-address"].port == $np) | .["frontend-address"] | "\(.ip):\(.port)"] | unique,
	  nodeport_shares_backends: $shares}' >"$out/lbmap.json"

# ---- 3. events.json -------------------------------------------------------------
k -n "$ns" scale deploy/nginx --replicas="$scaled_replicas" >/dev/null
poll 120 fe_count "$scaled_replicas"
slices_ready() {
	k -n "$ns" get endpointslices -l kubernetes.io/service-name=nginx-service -o json >"$tmp/slices.json" &&
		[ "$(jq '[.items[].endpoints[]? | select(.conditions.ready == true)] | length' "$tmp/slices.json")" -eq "$scaled_replicas" ]
}
wait_for 60 slices_ready
# the backend slots as the agent has them now: read until all the scaled
# replicas have one (the master's count can be ahead of the slots' rows
# in one read), as labrun's scaled_slots polls the map
after_slots() {
	after_ids=$(slot_ids "$frontend" | jq -R 'tonumber' | jq -s -c .)
	[ "$(jq length <<<"$after_ids")" -eq "$scaled_replicas" ]
}
poll 60 after_slots
jq -n --argjson id "$service_id" --argjson ids "$ids" --argjson after "$after_ids" \
	--argjson after_id "$(awk -v fe="$frontend/TCP" '$1 == fe && $2 == "(0)" { gsub(/[()]/, "", $5); print $5 }' "$tmp/fes")" \
	--argjson ready "$(jq '[.items[].endpoints[]? | select(.conditions.ready == true)] | length' "$tmp/slices.json")" \
	'{service_id_before: $id, service_id_after: $after_id, slots_before: ($ids | length), slots_after: ($after | length),
	  kept_backend_ids: [$ids[] | select(. as $i | $after | index($i))] | sort, endpointslice_ready: $ready}' >"$out/events.json"

# ---- 4. socketlb.json -------------------------------------------------------------
root=$(k -n kube-system get configmap cilium-config -o jsonpath='{.data.cgroup-root}')
on_node bpftool cgroup show "$root" >"$tmp/cgroup"
k -n "$ns" exec client -- python3 /scripts/probe.py tcp "$cluster_ip" 8080 >"$tmp/tcp"
udp_ip=$(k -n "$ns" get svc echo-udp -o jsonpath='{.spec.clusterIP}')
k -n "$ns" exec client -- python3 /scripts/probe.py udp "$udp_ip" 5353 >"$tmp/udp"
agent bpf ct list global >"$tmp/ct"
jq -n --arg root "$root" \
	--argjson hooks "$(awk '$NF ~ /^cil_/ { print $2 }' "$tmp/cgroup" | sort -u | jq -R . | jq -s -c .)" \
	--slurpfile tcp "$tmp/tcp" --slurpfile udp "$tmp/udp" \
	--argjson ct "$(grep -c -E "(^| )${cluster_ip//./\\.}:" "$tmp/ct" || true)" \
	--arg udp_service "$udp_ip:5353" \
	'{cgroup_root: $root, cgroup_hooks: $hooks,
	  tcp_getpeername: $tcp[0].getpeername, tcp_kernel_peer: $tcp[0].kernel_peer,
	  tcp_server_saw: ($tcp[0].answer | capture("client=(?<ip>[0-9.]+):").ip),
	  ct_entries_with_cluster_ip: $ct, udp_service: $udp_service, udp_reply_from: $udp[0].reply_from,
	  udp_server_saw: ($udp[0].answer | capture("client=(?<ip>[0-9.]+):").ip)}' >"$out/socketlb.json"

# ---- 5. affinity.json -------------------------------------------------------------
sticky_ip=$(k -n "$ns" get svc sticky -o jsonpath='{.spec.clusterIP}')
# distinct PROBE_OUTPUT: how many pods answered.
distinct() { jq -r '.answer' "$1" | grep -o 'pod=[^ ]*' | sort -u | wc -l; }
k -n "$ns" exec client -- python3 /scripts/probe.py tcp "$sticky_ip" 8081 "$requests" >"$tmp/sticky"
k -n "$ns" exec client -- python3 /scripts/probe.py tcp "$cluster_ip" 8080 "$requests" >"$tmp/plain"
k -n "$ns" get svc sticky -o json >"$tmp/sticky.json"
# slot 0's union holds the affinity timeout in its low 24 bits
union=$(awk -v fe="$sticky_ip:8081/TCP" '$1 == fe && $2 == "(0)" { print $3 }' "$tmp/fes")
jq -n --slurpfile svc "$tmp/sticky.json" --argjson map_timeout "$((union & 0xffffff))" \
	--argjson requests "$(wc -l <"$tmp/sticky")" --argjson sticky "$(distinct "$tmp/sticky")" --argjson plain "$(distinct "$tmp/plain")" \
	'{session_affinity: $svc[0].spec.sessionAffinity, timeout_seconds: $svc[0].spec.sessionAffinityConfig.clientIP.timeoutSeconds,
	  map_affinity_timeout: $map_timeout, requests: $requests, sticky_distinct_backends: $sticky, plain_distinct_backends: $plain}' >"$out/affinity.json"

# ---- 6. nodeport.json, 7. local.json ------------------------------------------------
# get URL: curl from the outside client; body and the code on the last line, in $tmp/curl.
get() { outside curl -s -m 5 -w '\n%{http_code}' "$1" >"$tmp/curl" || true; }
ok() { get "$1" && [ "$(tail -n 1 "$tmp/curl")" = 200 ]; }
seen() { grep -o 'client=[0-9.]*' "$tmp/curl" | cut -d= -f2; }
poll 60 ok "http://$node1_ip:$np_port/"
np_pod=$(grep -o 'pod=[^ ]*' "$tmp/curl" | cut -d= -f2)
np_seen=$(seen)
agent status --verbose >"$tmp/np_status"
on_node iptables-save >"$tmp/np_iptables"
jq -n --arg ip "$node1_ip" --argjson port "$np_port" \
	--arg node "$(k -n "$ns" get pod "$np_pod" -o jsonpath='{.spec.nodeName}')" --arg seen "$np_seen" \
	--argjson ss "$(on_node ss -Htln "sport = :$np_port" | wc -l)" --argjson ipt "$(count "$tmp/np_iptables" "$np_port")" \
	--arg mode "$(mode "$tmp/np_status")" \
	'{node_ip: $ip, node_port: $port, http_code: 200, backend_node: $node, client_seen_by_backend: $seen,
	  listen_sockets: $ss, iptables_lines: $ipt, lb_mode: $mode}' >"$out/nodeport.json"
poll 60 ok "http://$node2_ip:$local_port/"
local_seen=$(seen)
other_exit=0
outside curl -s -o /dev/null -m 3 "http://$node1_ip:$local_port/" || other_exit=$?
jq -n --arg seen "$local_seen" --argjson exit "$other_exit" \
	'{backend_node_http_code: 200, backend_node_client_seen: $seen, other_node_curl_exit: $exit}' >"$out/local.json"

# ---- 8. dsr.json -------------------------------------------------------------------
before_mode=$(mode "$tmp/np_status")
before_routing=$(awk '$1 == "Routing:" { print $3; exit }' "$tmp/np_status")
rollback_to=$(on_node helm history cilium -n kube-system -o json | jq '.[-1].revision')
on_node helm upgrade cilium "$CHART" -n kube-system --reuse-values --set loadBalancer.mode=dsr --set loadBalancer.dsrDispatch=opt \
	--set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10.42.0.0/16 >/dev/null
wait_for 300 k -n kube-system rollout status ds/cilium --timeout=300s >/dev/null
# agents_in MODE ROUTING: both agents report the mode and routing.
agents_in() {
	local p
	for p in $(k -n kube-system get pods -l k8s-app=cilium -o jsonpath='{.items[*].metadata.name}'); do
		k -n kube-system exec "$p" -c cilium-agent -- cilium-dbg status --verbose >"$tmp/agent" 2>/dev/null || return 1
		[ "$(mode "$tmp/agent")" = "$1" ] && [ "$(awk '$1 == "Routing:" { print $3; exit }' "$tmp/agent")" = "$2" ] || return 1
	done
}
poll 180 agents_in DSR Native
agent_pod=$(node1_agent)
agent status --verbose >"$tmp/dsr_status"
answered_by() { ok "http://$node1_ip:$np_port/" && [ "$(seen)" = "$1" ]; }
poll 180 answered_by "$outside_ip"
dsr_seen=$(seen)
on_node helm rollback cilium "$rollback_to" -n kube-system >/dev/null
wait_for 300 k -n kube-system rollout status ds/cilium --timeout=300s >/dev/null
poll 180 agents_in "$before_mode" "$before_routing"
agent_pod=$(node1_agent)
rollback_to=
snat_again() { ok "http://$node1_ip:$np_port/" && grep -qx -F "$(seen)" "$tmp/own"; }
poll 180 snat_again
agent status --verbose >"$tmp/restored_status"
jq -n --arg mode "$(mode "$tmp/dsr_status")" --arg seen "$dsr_seen" --arg restored "$(mode "$tmp/restored_status")" \
	'{lb_mode: $mode, http_code: 200, client_seen_by_backend: $seen, restored_lb_mode: $restored}' >"$out/dsr.json"

# ---- 9. report.txt ------------------------------------------------------------------
nginx_in_agent "$scaled_replicas" || true
agent status --verbose >"$tmp/status_now"
agent bpf lb list --frontends >"$tmp/fes"
k -n "$ns" exec client -- python3 /scripts/probe.py tcp "$sticky_ip" 8081 "$requests" >"$tmp/sticky_now"
poll 60 ok "http://$node1_ip:$np_port/"
{
	echo "service_id=$(jq -r --arg ns "$ns" '.[] | .status.realized // .spec | select(.flags.namespace == $ns and .flags.name == "nginx-service"
		and .flags.type == "ClusterIP" and .["frontend-address"].port == 8080) | .id' "$tmp/services.json")"
	echo "backend_count=$(awk -v fe="$frontend/TCP" '$1 == fe && $2 == "(0)" { sub(/\[.*/, "", $4); print $4 }' "$tmp/fes")"
	echo "socket_lb=$(kpr_field "$tmp/status_now" "Socket LB")"
	echo "sticky_distinct_backends=$(distinct "$tmp/sticky_now")"
	echo "nodeport_client_seen=$(seen)"
	echo "lb_mode=$(mode "$tmp/status_now")"
} >"$out/report.txt"

if [ -n "${BENCH_WAITS:-}" ]; then echo "$waited_us" >"$BENCH_WAITS"; fi
