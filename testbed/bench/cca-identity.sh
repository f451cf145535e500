#!/usr/bin/env bash
# Reference solution of the cca-identity lab in bash, the way a careful lab
# author writes one today: kubectl, jq, grep/awk, cilium-dbg through kubectl
# exec in each node's agent, ip and iptables-save in the nodes' shells, curl
# in the lab's pods, and polling loops without sleeps (each try is one round
# trip). It writes the same 8 files as playbooks/cca-identity.yaml, with the
# same keys, values and types, and is idempotent like the playbook: apply
# with --server-side --force-conflicts, give a visitor relabelled by an
# earlier run its own labels back, reuse the pods, restart frontend again.
#
# It does what the files need and nothing more: the playbook's cross-checks
# that read extra data only to assert (the agent's identity list, which
# names the reserved identities of ipcache.json) and the assertions
# themselves are left out, which favours this script.
#
# Usage (from the repository root, on the two-node test cluster):
#   testbed/bench/cca-identity.sh OUTDIR
# Environment (defaults are the test cluster's):
#   KUBECTL, KUBECONFIG, NODE_EXEC (argv prefix for node 1's shell; empty on
#   the lab VM itself), NODE2_EXEC (node 2's), FIXTURES, CURL_IMAGE,
#   HTTP_IMAGE; BENCH_WAITS: a file to write the microseconds spent waiting
#   for pods, the rollout and CiliumEndpoints into, for testbed/bench/run
set -euo pipefail

out=${1:?usage: testbed/bench/cca-identity.sh OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}
NODE_EXEC=${NODE_EXEC-/var/lib/labrun-testbed/bin/node-exec}
NODE2_EXEC=${NODE2_EXEC-/var/lib/labrun-testbed/bin/node-exec --node 2}
FIXTURES=${FIXTURES:-playbooks/cca-identity/fixtures}
CURL_IMAGE=${CURL_IMAGE:-labrun.local/curl:7.88.1}
HTTP_IMAGE=${HTTP_IMAGE:-labrun.local/python:3.11.2}

ns=shop
replicas=2

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "cca-identity.sh: $*" >&2; exit 1; }
k() { "$KUBECTL" "$@"; }
read -r -a node_exec <<<"$NODE_EXEC"
read -r -a node2_exec <<<"$NODE2_EXEC"
on_node() { "${node_exec[@]}" "$@"; }
on_node2() { "${node2_exec[@]}" "$@"; }

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
# jlist: stdin's lines as a JSON list of strings, sorted.
jlist() { jq -R . | jq -s -c 'sort'; }

# ---- 1. nodes.json -------------------------------------------------------------
k apply --server-side --force-conflicts -f "$FIXTURES/shop.yaml" >/dev/null
k get nodes -o json >"$tmp/nodes.json"
addrs() { awk '{ split($4, a, "/"); print a[1] }' | jq -R . | jq -s -c .; }
# holder ADDRS: the node whose InternalIP is among ADDRS (a JSON list).
holder() {
	jq -r --argjson own "$1" '.items[] | select(any(.status.addresses[]; .type == "InternalIP" and (.address as $a | $own | index($a)))) | .metadata.name' "$tmp/nodes.json"
}
front=$(holder "$(on_node ip -4 -o addr show | addrs)")
back=$(holder "$(on_node2 ip -4 -o addr show | addrs)")
[ "$(wc -w <<<"$front")" = 1 ] && [ "$(wc -w <<<"$back")" = 1 ] && [ "$front" != "$back" ] ||
	die "node 1's and node 2's shells should each hold the InternalIP of one, different, node"
ip_of() { jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .status.addresses[] | select(.type == "InternalIP") | .address' "$tmp/nodes.json"; }
front_ip=$(ip_of "$front")
back_ip=$(ip_of "$back")
k label node "$front" lab.labrun.io/tier=front --overwrite >/dev/null
k label node "$back" lab.labrun.io/tier=back --overwrite >/dev/null
# a visitor relabelled by an earlier run takes back its own labels (the
# probes are the pods of app frontend or visitor without a pod-template-hash)
k -n "$ns" label pods -l 'app in (frontend,visitor),!pod-template-hash' app=visitor team- --overwrite >/dev/null 2>&1

# probe NAME: the manifest of a probe pod (intruder, visitor) on tier=front.
probe() {
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $ns, labels: {app: $1}}
spec:
  nodeSelector: {lab.labrun.io/tier: front}
  terminationGracePeriodSeconds: 1
  containers:
  - {name: $1, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}
EOF
}
{
	cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: $ns, labels: {app: frontend}}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend, team: payments}}
    spec:
      nodeSelector: {lab.labrun.io/tier: front}
      terminationGracePeriodSeconds: 1
      containers:
      - {name: frontend, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: backend, namespace: $ns, labels: {app: backend}}
spec:
  replicas: 1
  selector: {matchLabels: {app: backend}}
  template:
    metadata: {labels: {app: backend, team: payments}}
    spec:
      nodeSelector: {lab.labrun.io/tier: back}
      terminationGracePeriodSeconds: 1
      containers:
      - name: backend
        image: $HTTP_IMAGE
        imagePullPolicy: IfNotPresent
        command: [python3, -m, http.server, "8080"]
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
EOF
	probe intruder
	probe visitor
} | k apply --server-side --force-conflicts -f - >/dev/null

# pods_ready SELECTOR N [FILE]: exactly N pods (terminating ones count), all
# Ready; the list is left in FILE ($tmp/pods.json).
pods_ready() {
	local f=${3:-$tmp/pods.json}
	k -n "$ns" get pods -l "$1" -o json >"$f" &&
		jq -e --argjson n "$2" '(.items | length) == $n and
			all(.items[]; any(.status.conditions[]?; .type == "Ready" and .status == "True"))' "$f" >/dev/null
}
wait_for 180 k -n "$ns" rollout status deploy/frontend --timeout=180s >/dev/null
wait_for 180 k -n "$ns" rollout status deploy/backend --timeout=180s >/dev/null
wait_for 180 pods_ready "app in (intruder,visitor)" 2
wait_for 180 pods_ready "app in (frontend,backend),pod-template-hash" $((replicas + 1)) "$tmp/placed.json"
jq '[.items[] | select(.metadata.labels.app == "frontend")]' "$tmp/placed.json" >"$tmp/frontend.json"
backend_pod=$(jq -r '.items[] | select(.metadata.labels.app == "backend") | .metadata.name' "$tmp/placed.json")
backend_ip=$(jq -r '.items[] | select(.metadata.labels.app == "backend") | .status.podIP' "$tmp/placed.json")
backend_node=$(jq -r '.items[] | select(.metadata.labels.app == "backend") | .spec.nodeName' "$tmp/placed.json")
jq -n --arg front "$front" --arg back "$back" --slurpfile fe "$tmp/frontend.json" --arg bn "$backend_node" \
	'{front_node: $front, back_node: $back, frontend_nodes: ($fe[0] | map(.spec.nodeName) | unique), backend_node: $bn}' >"$out/nodes.json"

# ---- 2. identity.json ----------------------------------------------------------------
agent_of() { k -n kube-system get pods -l k8s-app=cilium --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'; }
agent1=$(agent_of "$front")
agent2=$(agent_of "$back")
ag1() { k -n kube-system exec "$agent1" -c cilium-agent -- cilium-dbg "$@"; }
ag2() { k -n kube-system exec "$agent2" -c cilium-agent -- cilium-dbg "$@"; }

# ceps_with_identity PODS_FILE: every pod of PODS_FILE (a JSON list) has a
# CiliumEndpoint with an identity; the CiliumEndpoints are left in $tmp/ceps.json.
ceps_with_identity() {
	k -n "$ns" get ciliumendpoints -o json >"$tmp/ceps.json" &&
		jq -e --slurpfile p "$1" '($p[0] | map(.metadata.name)) as $names |
			[.items[] | select(.metadata.name as $n | $names | index($n)) | select((.status.identity.id // 0) > 0)] | length == ($names | length)' "$tmp/ceps.json" >/dev/null
}
# ids_of PODS_FILE: the distinct identities of those pods' CiliumEndpoints.
ids_of() {
	jq -c --slurpfile p "$1" '($p[0] | map(.metadata.name)) as $names |
		[.items[] | select(.metadata.name as $n | $names | index($n)) | .status.identity.id] | reduce .[] as $i ([]; if index([$i]) then . else . + [$i] end)' "$tmp/ceps.json"
}
wait_for 60 ceps_with_identity "$tmp/frontend.json"
identity=$(ids_of "$tmp/frontend.json" | jq '.[0]')
# every identity a pod of the namespace has now (compared with after the rollout below)
ns_ids_before=$(jq -c '[.items[].status.identity.id // 0] | unique' "$tmp/ceps.json")
ag1 identity get "$identity" -o json >"$tmp/identity_get.json"
k get ciliumidentity "$identity" -o json >"$tmp/identity_crd.json"
jq -n --argjson id "$identity" --slurpfile agent "$tmp/identity_get.json" --slurpfile crd "$tmp/identity_crd.json" \
	--slurpfile fe "$tmp/frontend.json" --slurpfile ceps "$tmp/ceps.json" \
	'($agent[0][0].labels | sort) as $labels |
	 ($fe[0][0].metadata.labels) as $pl | ($pl | to_entries | map("k8s:\(.key)=\(.value)")) as $own |
	 ($fe[0] | map(.metadata.name)) as $names |
	 {identity: $id, identity_labels: $labels,
	  excluded_label_keys: [$pl | keys[] | select(("k8s:\(.)=\($pl[.])") as $l | $labels | index($l) | not)] | sort,
	  added_labels: [$labels[] | select(. as $l | $own | index($l) | not)] | sort,
	  replicas_sharing_identity: [$ceps[0].items[] | select(.metadata.name as $n | $names | index($n)) | select(.status.identity.id == $id)] | length,
	  crd_labels_match: (($crd[0]["security-labels"] | to_entries | map("\(.key)=\(.value)") | sort) == $labels)}' >"$out/identity.json"

# ---- 3. rollout.json -----------------------------------------------------------------
backend_cep_ready() {
	k -n "$ns" get ciliumendpoint "$backend_pod" -o json >"$tmp/backend_cep.json" 2>/dev/null &&
		jq -e '(.status.id // 0) > 0 and (.status.identity.id // 0) > 0' "$tmp/backend_cep.json" >/dev/null
}
wait_for 60 backend_cep_ready
backend_ep=$(jq '.status.id' "$tmp/backend_cep.json")
# allows_frontend: backend's policy map (node 2) allows the frontend identity on 8080/TCP.
allows_frontend() {
	ag2 bpf policy get -n "$backend_ep" >"$tmp/policy_before" &&
		awk -v id="$identity" '$1 == "Allow" && $2 == "Ingress" && $3 == id && $4 == "8080/TCP" { found = 1 } END { exit !found }' "$tmp/policy_before"
}
poll 60 allows_frontend
before_pods=$(jq -c 'map(.metadata.name)' "$tmp/frontend.json")
before_ips=$(jq -r '.[].status.podIP' "$tmp/frontend.json" | jlist)
before_hash=$(jq -r '.[0].metadata.labels["pod-template-hash"]' "$tmp/frontend.json")

k -n "$ns" rollout restart deploy/frontend >/dev/null
restarted() {
	pods_ready "app=frontend,pod-template-hash" "$replicas" "$tmp/restarted.json" &&
		jq -e --argjson old "$before_pods" 'all(.items[]; .metadata.name as $n | $old | index($n) | not)' "$tmp/restarted.json" >/dev/null
}
wait_for 180 restarted
wait_for 180 k -n "$ns" rollout status deploy/frontend --timeout=180s >/dev/null
jq '.items' "$tmp/restarted.json" >"$tmp/after.json"
wait_for 60 ceps_with_identity "$tmp/after.json"
after_identity=$(ids_of "$tmp/after.json" | jq '.[0]')
# the identities pods of the namespace have both before and after the
# rollout, one per line: with the reserved ones (< 256), the policy map's
# entries compared. An identity no pod has any more can keep an entry for
# a few seconds (a stale one after an agent restart), and one a pod leaves
# meanwhile loses it.
jq -r --argjson before "$ns_ids_before" '[.items[].status.identity.id // 0] | unique | map(select(. as $i | $before | index($i))) | .[]' \
	"$tmp/ceps.json" >"$tmp/live_ids"
after_ips=$(jq -r '.[].status.podIP' "$tmp/after.json" | jlist)
after_hash=$(jq -r '.[0].metadata.labels["pod-template-hash"]' "$tmp/after.json")

# ipcache_id FILE PREFIX: the identity of PREFIX in `bpf ipcache list` FILE
# ("10.42.1.9/32   identity=33624 encryptkey=0 tunnelendpoint=10.250.42.3 flags=hastunnel").
ipcache_field() { awk -v p="$2" -v f="$3" '$1 == p { for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) print substr($i, length(f) + 2) }' "$1"; }
ipcache_id() { ipcache_field "$1" "$2" identity; }
# has_new_ips: $tmp/ipcache maps every new IP to the identity.
has_new_ips() {
	local ip
	for ip in $(jq -r '.[]' <<<"$after_ips"); do
		[ "$(ipcache_id "$tmp/ipcache" "$ip/32")" = "$after_identity" ] || return 1
	done
}
# dropped_old_ips: $tmp/ipcache maps no old IP (that is not a new one too) to it.
dropped_old_ips() {
	local ip
	for ip in $(jq -r --argjson new "$after_ips" '.[] | select(. as $i | $new | index($i) | not)' <<<"$before_ips"); do
		[ "$(ipcache_id "$tmp/ipcache" "$ip/32")" != "$after_identity" ] || return 1
	done
}
new_ips_mapped() { ag1 bpf ipcache list >"$tmp/ipcache" && has_new_ips && dropped_old_ips; }
poll 60 new_ips_mapped
# bool CMD...: true or false, as CMD succeeds.
bool() { if "$@"; then echo true; else echo false; fi; }
ipcache_new=$(bool has_new_ips)
ipcache_dropped=$(bool dropped_old_ips)
ag2 bpf policy get -n "$backend_ep" >"$tmp/policy_after"
# entries POLICY_TABLE: its Allow/Deny rows of reserved and live identities
# without the BYTES and PACKETS columns, sorted.
entries() {
	awk 'NR == FNR { live[$1] = 1; next }
		($1 == "Allow" || $1 == "Deny") && ($3 + 0 < 256 || $3 in live) { s = $1; for (i = 2; i <= 6; i++) s = s " " $i; for (i = 9; i <= NF; i++) s = s " " $i; print s }' \
		"$tmp/live_ids" "$1" | jlist
}
jq -n --argjson bips "$before_ips" --argjson aips "$after_ips" --arg bh "$before_hash" --arg ah "$after_hash" \
	--argjson bid "$identity" --argjson aid "$after_identity" \
	--argjson unchanged "$(bool [ "$(entries "$tmp/policy_before")" = "$(entries "$tmp/policy_after")" ])" \
	--argjson new "$ipcache_new" --argjson dropped "$ipcache_dropped" \
	'{before_ips: $bips, after_ips: $aips, before_hash: $bh, after_hash: $ah, before_identity: $bid, after_identity: $aid,
	  policy_map_unchanged: $unchanged, ipcache_has_new_ips: $new, ipcache_dropped_old_ips: $dropped}' >"$out/rollout.json"

# ---- 4. ipcache.json -----------------------------------------------------------------
has_backend_and_node2() {
	ag1 bpf ipcache list >"$tmp/ipcache" &&
		[ -n "$(ipcache_id "$tmp/ipcache" "$backend_ip/32")" ] && [ -n "$(ipcache_id "$tmp/ipcache" "$back_ip/32")" ]
}
poll 60 has_backend_and_node2
jq -n --argjson fid "$(ipcache_id "$tmp/ipcache" "$(jq -r '.[0]' <<<"$after_ips")/32")" --arg bip "$backend_ip" \
	--argjson bid "$(ipcache_id "$tmp/ipcache" "$backend_ip/32")" --arg tep "$(ipcache_field "$tmp/ipcache" "$backend_ip/32" tunnelendpoint)" \
	--argjson lid "$(ipcache_id "$tmp/ipcache" "$front_ip/32")" --arg rip "$back_ip" \
	--argjson rid "$(ipcache_id "$tmp/ipcache" "$back_ip/32")" --argjson wid "$(ipcache_id "$tmp/ipcache" 0.0.0.0/0)" \
	'{frontend_identity: $fid, backend_ip: $bip, backend_identity: $bid, backend_tunnel_endpoint: $tep,
	  local_node_identity: $lid, remote_node_ip: $rip, remote_node_identity: $rid, world_identity: $wid}' >"$out/ipcache.json"

# ---- 5. policy.json ------------------------------------------------------------------
intruder_cep() {
	k -n "$ns" get ciliumendpoint intruder -o json >"$tmp/intruder_cep.json" 2>/dev/null &&
		jq -e '(.status.identity.id // 0) > 0' "$tmp/intruder_cep.json" >/dev/null
}
wait_for 60 intruder_cep
service=$(k -n "$ns" get svc backend -o jsonpath='{.spec.clusterIP}'):80
policy_map() { awk -v m="$(printf 'cilium_policy_v3_%05d' "$2")" '$1 == m { print m }' "$1"; }
# lists_policy_map: node 2's agent lists backend's policy map (once it was
# missing from the list for a moment).
lists_policy_map() { ag2 map list >"$tmp/maps" && [ -n "$(policy_map "$tmp/maps" "$backend_ep")" ]; }
poll 60 lists_policy_map
# curl_code POD: the HTTP code of POD's request to Service backend, in $tmp/code.
curl_code() { k -n "$ns" exec "$1" -- curl -s -o /dev/null -m "${2:-5}" -w '%{http_code}' "http://$service/" >"$tmp/code" 2>/dev/null || true; }
ok_from() { curl_code "$1" "${2:-5}" && [ "$(cat "$tmp/code")" = 200 ]; }
poll 60 ok_from "$(jq -r '.[0].metadata.name' "$tmp/after.json")"
frontend_code=$(cat "$tmp/code")
intruder_exit=0
k -n "$ns" exec intruder -- curl -s -o /dev/null -m 3 "http://$service/" 2>/dev/null || intruder_exit=$?
jq -n --argjson ep "$backend_ep" --arg map "$(policy_map "$tmp/maps" "$backend_ep")" \
	--argjson allow "$(awk 'NR == FNR { live[$1] = 1; next } $1 == "Allow" && $2 == "Ingress" && $4 == "8080/TCP" && $3 in live { print $3 " " $4 }' "$tmp/live_ids" "$tmp/policy_after" | jlist)" \
	--argjson fid "$after_identity" --argjson iid "$(jq '.status.identity.id' "$tmp/intruder_cep.json")" \
	--argjson code "$frontend_code" --argjson exit "$intruder_exit" \
	'{backend_endpoint: $ep, policy_map: $map, ingress_allow: $allow, frontend_identity: $fid, intruder_identity: $iid,
	  frontend_http_code: $code, intruder_curl_exit: $exit}' >"$out/policy.json"

# ---- 6. relabel.json -----------------------------------------------------------------
# The agent re-resolves a relabelled pod's identity after a random jitter (up
# to identity-max-jitter, 30 s by default), so identities are read from
# node 1's endpoint list, not from the CiliumEndpoint, which follows later.
k -n "$ns" get pod visitor -o json >"$tmp/visitor_before.json"
visitor_ip=$(jq -r '.status.podIP' "$tmp/visitor_before.json")
# visitor_ep FILE: visitor's endpoint in node 1's agent ({identity, labels}).
visitor_ep() {
	ag1 endpoint list -o json >"$tmp/eps.json" &&
		jq -c --arg ip "$visitor_ip" '[.[] | select(any(.status.networking.addressing[]?; .ipv4 == $ip))][0] |
			{identity: (.status.identity.id // 0), labels: (.status.labels["security-relevant"] // [])}' "$tmp/eps.json" >"$1"
}
# own_identity: visitor's own labels and an identity other than frontend's
# (a re-run has just given visitor its labels back: the agent lists them at
# once but keeps frontend's identity until the jitter ends)
own_identity() {
	visitor_ep "$tmp/visitor_ep_before" &&
		jq -e --argjson fid "$after_identity" '(.labels | index("k8s:app=visitor")) and .identity != 0 and .identity != $fid' "$tmp/visitor_ep_before" >/dev/null
}
poll 180 own_identity
refused() {
	before_exit=0
	k -n "$ns" exec visitor -- curl -s -o /dev/null -m 3 "http://$service/" 2>/dev/null || before_exit=$?
	[ "$before_exit" != 0 ]
}
poll 60 refused
k -n "$ns" label pod visitor app=frontend team=payments --overwrite >/dev/null
frontend_identity_now() { visitor_ep "$tmp/visitor_ep_after" && jq -e --argjson fid "$after_identity" '.identity == $fid' "$tmp/visitor_ep_after" >/dev/null; }
poll 180 frontend_identity_now
in_ipcache() { ag1 bpf ipcache list >"$tmp/ipcache" && [ "$(ipcache_id "$tmp/ipcache" "$visitor_ip/32")" = "$after_identity" ]; }
poll 60 in_ipcache
poll 60 ok_from visitor 3
k -n "$ns" get pod visitor -o json >"$tmp/visitor_after.json"
jq -n --slurpfile b "$tmp/visitor_before.json" --slurpfile a "$tmp/visitor_after.json" \
	--slurpfile eb "$tmp/visitor_ep_before" --slurpfile ea "$tmp/visitor_ep_after" \
	--argjson ipc "$(ipcache_id "$tmp/ipcache" "$visitor_ip/32")" --argjson exit "$before_exit" --argjson code "$(cat "$tmp/code")" \
	'{ip: $a[0].status.podIP, pod_uid_unchanged: ($a[0].metadata.uid == $b[0].metadata.uid),
	  before_identity: $eb[0].identity, after_identity: $ea[0].identity, after_ipcache_identity: $ipc,
	  before_curl_exit: $exit, after_http_code: $code}' >"$out/relabel.json"

# ---- 7. datapath.json ----------------------------------------------------------------
# status_field FILE LABEL: the value of "LABEL:   value" in cilium-dbg status, spaces collapsed.
status_field() { awk -v l="$2:" 'index($0, l) == 1 { sub(/^[^:]*: */, ""); gsub(/ +/, " "); sub(/ $/, ""); print; exit }' "$1"; }
# routing FILE PART: "Tunnel [vxlan]" (network) or "Legacy" (host) of "Routing: Network: Tunnel [vxlan]   Host: Legacy".
routing() {
	local r
	r=$(status_field "$1" Routing)
	case $2 in
	network) r=${r#Network: }; echo "${r% Host:*}" ;;
	host) echo "${r##*Host: }" ;;
	esac
}
ag1 status --verbose >"$tmp/status"
k -n kube-system get ds cilium -o json >"$tmp/ds.json"
on_node iptables-save >"$tmp/iptables"
env_of() { jq -r --arg n "$1" '.spec.template.spec.containers[] | select(.name == "cilium-agent") | .env[] | select(.name == $n) | .value' "$tmp/ds.json"; }
jq -n --arg kpr "$(status_field "$tmp/status" KubeProxyReplacement | awk '{ print $1 }')" \
	--arg net "$(routing "$tmp/status" network)" --arg host "$(routing "$tmp/status" host)" \
	--arg masq "$(status_field "$tmp/status" Masquerading)" \
	--arg sh "$(env_of KUBERNETES_SERVICE_HOST)" --argjson sp "$(env_of KUBERNETES_SERVICE_PORT)" \
	--arg cip "$(k -n default get svc kubernetes -o jsonpath='{.spec.clusterIP}')" \
	--argjson svc "$(grep -c -F KUBE-SVC "$tmp/iptables" || true)" \
	'{kube_proxy_replacement: $kpr, routing_network: $net, routing_host: $host, masquerading: $masq,
	  k8s_service_host: $sh, k8s_service_port: $sp, kubernetes_cluster_ip: $cip, kube_svc_lines: $svc}' >"$out/datapath.json"

# ---- 8. report.txt -------------------------------------------------------------------
k -n "$ns" get pods -l app=frontend,pod-template-hash -o json | jq '.items' >"$tmp/frontend_now.json"
k -n "$ns" get pods -l app=backend -o json >"$tmp/backend_now.json"
k -n "$ns" get ciliumendpoints -o json >"$tmp/ceps.json"
ag1 status >"$tmp/status_now"
ag1 endpoint list -o json >"$tmp/eps.json"
visitor_ip=$(k -n "$ns" get pod visitor -o jsonpath='{.status.podIP}')
ag1 bpf ipcache list >"$tmp/ipcache"
poll 60 lists_policy_map
backend_pod=$(jq -r '.items[0].metadata.name' "$tmp/backend_now.json")
backend_ip=$(jq -r '.items[0].status.podIP' "$tmp/backend_now.json")
{
	echo "frontend_identity=$(ids_of "$tmp/frontend_now.json" | jq '.[0]')"
	echo "backend_node=$(jq -r '.items[0].spec.nodeName' "$tmp/backend_now.json")"
	echo "backend_tunnel_endpoint=$(ipcache_field "$tmp/ipcache" "$backend_ip/32" tunnelendpoint)"
	echo "policy_map=$(policy_map "$tmp/maps" "$(jq --arg n "$backend_pod" '.items[] | select(.metadata.name == $n) | .status.id' "$tmp/ceps.json")")"
	echo "visitor_identity=$(jq --arg ip "$visitor_ip" '[.[] | select(any(.status.networking.addressing[]?; .ipv4 == $ip))][0].status.identity.id' "$tmp/eps.json")"
	echo "routing_network=$(routing "$tmp/status_now" network)"
} >"$out/report.txt"

if [ -n "${BENCH_WAITS:-}" ]; then echo "$waited_us" >"$BENCH_WAITS"; fi
