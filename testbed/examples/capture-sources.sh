#!/usr/bin/env bash
# examples/capture-sources.sh: on a running two-node testbed (profile
# tunnel), deploy a policy scenario across the nodes and capture what the
# capture action's hubble and tcpdump sources read into
# testbed/captures/sources/ (golden inputs for parser tests):
#  - hubble observe -o jsonpb in node 2's agent (where api runs and its
#    ingress policy decides), while the intruder (node 1) asks api on 8080
#    (dropped by policy) and the frontend (node 1) does (forwarded), once
#    for the drops and once for everything of the namespace;
#  - tcpdump -l -n on node 1, through node-exec, while the frontend asks
#    api: on cilium_vxlan (the pods' packets, decapsulated), on eth0 (the
#    VXLAN packets, UDP 8472, with the pods' packets inside) and on every
#    interface (-i any: the client's lxc device, cilium_vxlan, eth0).
# Each command runs as the capture action runs it (the scripts in
# actions/capturesource.go), for a fixed time. Same 4-line header as
# capture.sh, the stderr beside it.
#
# Usage: testbed/examples/capture-sources.sh [OUTDIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TB="$(dirname "$HERE")"
ROOT="$(dirname "$TB")"
source "$TB/lib/common.sh"
need_root
load_env || die "testbed is not up"
[[ ${PROFILE:-} == tunnel ]] || die "profile ${PROFILE:-single}; run on the tunnel profile (testbed/up --profile tunnel)"
OUT="${1:-$TB/captures/sources}"
mkdir -p "$OUT"

agent_on() {
  kc -n kube-system get pods -l k8s-app=cilium --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'
}
A1="$(agent_on "$(node_name 1)")"; A2="$(agent_on "$(node_name 2)")"
[[ -n $A1 && -n $A2 ]] || die "no agent pod on each node"
CILIUM_V="$(kc -n kube-system exec "$A1" -c cilium-agent -- cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2}')"
V_HUBBLE="$(kc -n kube-system exec "$A2" -c cilium-agent -- hubble --version 2>/dev/null | tr -d '\r')"
V_TCPDUMP="$("$NODE_EXEC" tcpdump --version 2>&1 | head -n1)"
V_KUBECTL="kubectl $(kc version --client -o json | jq -r .clientVersion.gitVersion)"
source "$HERE/capture-lib.sh"

# ---- the scenario: api on node 2 behind cca-policy's policy; frontend and
# intruder on node 1 ---------------------------------------------------------
NS=capture-src
sed -e "s/namespace: cca-policy/namespace: $NS/; s/name: cca-policy$/name: $NS/" \
  "$ROOT/playbooks/cca-policy/fixtures/policy.yaml" | kc apply -f - >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: $NS, labels: {app: api}}
spec:
  nodeName: $(node_name 2)
  terminationGracePeriodSeconds: 1
  containers:
  - {name: api, image: $PYTHON_IMAGE, imagePullPolicy: IfNotPresent, command: [python3, -m, http.server, "8080"],
     readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: frontend, namespace: $NS, labels: {app: frontend}}
spec:
  nodeName: $(node_name 1)
  terminationGracePeriodSeconds: 0
  containers: [{name: curl, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: intruder, namespace: $NS, labels: {app: intruder}}
spec:
  nodeName: $(node_name 1)
  terminationGracePeriodSeconds: 0
  containers: [{name: curl, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}]
YAML
ready() { [[ "$(kc -n $NS get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" == 3 ]]; }
wait_for "api, frontend and intruder Ready" 180 "" ready
API_IP="$(kc -n $NS get pod api -o jsonpath='{.status.podIP}')"
api_ep() { kc -n $NS get cep api -o jsonpath='{.status.id}'; }
wait_for "api's CiliumEndpoint" 60 "" api_ep
FRONT_IDENT="$(kc -n $NS get cep frontend -o jsonpath='{.status.identity.id}')"
realized() { kc -n kube-system exec "$A2" -c cilium-agent -- cilium-dbg bpf policy get -n "$(api_ep)" 2>/dev/null | awk -v id="$FRONT_IDENT" '$1=="Allow" && $2=="Ingress" && $3==id && $4=="8080/TCP"' | grep -q .; }
wait_for "api's policy map allows the frontend on 8080/TCP" 60 "" realized
log "api at $API_IP on $(node_name 2)"

traffic() {
  kc -n $NS exec intruder -- curl -sS -o /dev/null -m 2 "http://$API_IP:8080/" || true
  kc -n $NS exec frontend -- curl -sS -o /dev/null -m 5 "http://$API_IP:8080/" || true
}

# stream FILE HEADER_CMD SECONDS CMD...: CMD for SECONDS while the traffic
# runs (started 2 s in), ended as the capture action ends it: the end of
# its input (the scripts in the agent) or SIGINT (tcpdump).
stream() {
  local file=$1 shown=$2 tool=$3 secs=$4; shift 4
  local outf errf rc=0
  outf="$(mktemp)"; errf="$(mktemp)"
  if [[ $1 == tcpdump ]]; then
    "$NODE_EXEC" "$@" >"$outf" 2>"$errf" &
    local pid=$!
    sleep 2; traffic; sleep "$((secs - 2))"
    kill -INT "$pid"; wait "$pid" || rc=$?
  else
    sleep "$secs" | "$@" >"$outf" 2>"$errf" &
    local pid=$!
    sleep 2; traffic
    wait "$pid" || rc=$?
  fi
  local hdr
  hdr="$(printf '# command: %s\n# cilium: v%s\n# tool: %s\n# exit: %s\n# ended: %s' "$shown" "$CILIUM_V" "$tool" "$rc" \
    "after $secs s, as the capture action ends it")"
  { echo "$hdr"; cat "$outf"; } >"$OUT/$file"
  rm -f "$OUT/$file.stderr"
  if [[ -s $errf ]]; then { echo "$hdr"; cat "$errf"; } >"$OUT/$file.stderr"; fi
  rm -f "$outf" "$errf"
  log "captured $file (exit $rc)"
}

# the capture action's hubble script (actions/capturesource.go, hubbleScript)
HUBBLE_SCRIPT='export TZ=UTC0; exec 3<&0; "$@" --print-raw-filters >/dev/null </dev/null || exit; hubble status >&2 </dev/null || exit; t=$EPOCHREALTIME; printf -v since '"'"'%(%Y-%m-%dT%H:%M:%S)T.%sZ'"'"' "${t%[.,]*}" "${t#*[.,]}"; echo "labrun: hubble flows since $since" >&2; "$@" --since "$since" </dev/null & m=$!; (read -r _ <&3; kill $m) >/dev/null 2>&1 & r=$!; wait $m; s=$?; kill $r 2>/dev/null; wait $r; exit $s'
K2="kubectl -n kube-system exec -i <node 2's agent> -c cilium-agent --"
hubble_in_agent() { kc -n kube-system exec -i "$A2" -c cilium-agent -- bash -c "$HUBBLE_SCRIPT" hubble hubble observe --follow -o jsonpb "$@"; }
stream hubble_observe_follow_o_jsonpb_verdict_DROPPED.txt "$K2 hubble observe --follow -o jsonpb --verdict=DROPPED --namespace=$NS" "$V_HUBBLE" 8 \
  hubble_in_agent --verdict=DROPPED --namespace=$NS
stream hubble_observe_follow_o_jsonpb_namespace.txt "$K2 hubble observe --follow -o jsonpb --namespace=$NS" "$V_HUBBLE" 8 \
  hubble_in_agent --namespace=$NS

N1="node-exec"
stream node1_tcpdump_l_n_i_cilium_vxlan.txt "$N1 tcpdump -l -n --immediate-mode -i cilium_vxlan -- tcp port 8080" "$V_TCPDUMP" 6 \
  tcpdump -l -n --immediate-mode -i cilium_vxlan -- "tcp port 8080"
stream node1_tcpdump_l_n_i_eth0_udp_8472.txt "$N1 tcpdump -l -n --immediate-mode -i eth0 -- udp port 8472" "$V_TCPDUMP" 6 \
  tcpdump -l -n --immediate-mode -i eth0 -- "udp port 8472"
stream node1_tcpdump_l_n_i_any_host_api.txt "$N1 tcpdump -l -n --immediate-mode -i any -- host <api's IP> and tcp port 8080" "$V_TCPDUMP" 6 \
  tcpdump -l -n --immediate-mode -i any -- "host $API_IP and tcp port 8080"

cap kubectl_get_pods_wide.txt "$V_KUBECTL" "kubectl -n $NS get pods -o wide" -- kc -n $NS get pods -o wide
cap kubectl_get_cep.txt "$V_KUBECTL" "kubectl -n $NS get cep -o wide" -- kc -n $NS get cep -o wide
log "captures written to $OUT (namespace $NS left in place; kubectl delete namespace $NS)"
