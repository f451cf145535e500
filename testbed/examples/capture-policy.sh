#!/usr/bin/env bash
# examples/capture-policy.sh: deploy a network policy scenario by hand on the
# running testbed (single profile) and capture the raw output of the
# commands the cca-policy lab and the capture action read into
# testbed/captures/policy/ (golden inputs for parser tests): the api
# endpoint's policy map (with labels, -n, -o json, --all), and
# cilium-dbg monitor while the intruder and the frontend ask api (drops as
# JSON and as text, policy verdicts).
#
# The scenario: namespace cca-policy from playbooks/cca-policy/fixtures
# (Service api, CiliumNetworkPolicy api-ingress: only app=frontend on
# 8080/TCP), Deployment api (python http.server on 8080 and 9005), Pods
# frontend and intruder (curl), and a second policy api-deny that denies
# the intruder ports 9000-9010/TCP (a Deny entry with a port range).
#
# Same 4-line header as capture.sh. Usage: capture-policy.sh [OUTDIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TB="$(dirname "$HERE")"
ROOT="$(dirname "$TB")"
source "$TB/lib/common.sh"
need_root
load_env || die "testbed is not up"
OUT="${1:-$TB/captures/policy}"
mkdir -p "$OUT"

AGENT=(kc -n kube-system exec ds/cilium -c cilium-agent --)
CILIUM_V="$("${AGENT[@]}" cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2}')"
[[ -n $CILIUM_V ]] || die "cannot read the agent's version"
source "$HERE/capture-lib.sh"
V_DBG="cilium-dbg $("${AGENT[@]}" cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2, $3}')"

NS=cca-policy
kc apply -f "$ROOT/playbooks/cca-policy/fixtures/policy.yaml" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: $NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: api
        image: $PYTHON_IMAGE
        command: [sh, -c, "python3 -m http.server 9005 & exec python3 -m http.server 8080"]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: frontend, namespace: $NS, labels: {app: frontend}}
spec: {terminationGracePeriodSeconds: 0, containers: [{name: curl, image: $CURL_IMAGE, command: [sleep, "86400"]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: intruder, namespace: $NS, labels: {app: intruder}}
spec: {terminationGracePeriodSeconds: 0, containers: [{name: curl, image: $CURL_IMAGE, command: [sleep, "86400"]}]}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: api-deny, namespace: $NS}
spec:
  endpointSelector: {matchLabels: {app: api}}
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: intruder}}]
    toPorts: [{ports: [{port: "9000", endPort: 9010, protocol: TCP}]}]
YAML
ready() { [[ "$(kc -n $NS get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" == 3 ]]; }
wait_for "api, frontend and intruder Ready" 180 "" ready
cep() { kc -n $NS get cep "$1" -o jsonpath="$2"; }
API_CEP="$(kc -n $NS get cep -o name | grep '/api-' | head -n1)"; API_CEP="${API_CEP#*/}"
API_ID="$(cep "$API_CEP" '{.status.id}')"
API_IP="$(cep "$API_CEP" '{.status.networking.addressing[0].ipv4}')"
FRONT_IDENT="$(cep frontend '{.status.identity.id}')"
realized() { "${AGENT[@]}" cilium-dbg bpf policy get -n "$API_ID" 2>/dev/null | awk -v id="$FRONT_IDENT" '$1=="Allow" && $2=="Ingress" && $3==id && $4=="8080/TCP"' | grep -q .; }
wait_for "api's policy map allows the frontend on 8080/TCP" 60 "" realized
log "api: endpoint $API_ID at $API_IP; frontend identity $FRONT_IDENT"

# the frontend asks once first, so the allow entry has counted packets
kc -n $NS exec frontend -- curl -sS -o /dev/null -m 5 "http://$API_IP:8080/"

A="kubectl -n kube-system exec ds/cilium -c cilium-agent --"
cap cilium-dbg_bpf_policy_get_api.txt "$V_DBG" "$A cilium-dbg bpf policy get <api's endpoint id>" -- "${AGENT[@]}" cilium-dbg bpf policy get "$API_ID"
cap cilium-dbg_bpf_policy_get_n_api.txt "$V_DBG" "$A cilium-dbg bpf policy get -n <api's endpoint id>" -- "${AGENT[@]}" cilium-dbg bpf policy get -n "$API_ID"
cap cilium-dbg_bpf_policy_get_api_json.txt "$V_DBG" "$A cilium-dbg bpf policy get <api's endpoint id> -o json" -- "${AGENT[@]}" cilium-dbg bpf policy get "$API_ID" -o json
cap cilium-dbg_bpf_policy_get_all_n.txt "$V_DBG" "$A cilium-dbg bpf policy get --all -n" -- "${AGENT[@]}" cilium-dbg bpf policy get --all -n

# monitor FILE ARGS...: cilium-dbg monitor in the agent for 8 s, while
# the intruder asks api on 8080 (dropped: no allow) and 9005 (denied by
# api-deny) and the frontend on 8080 (allowed); stdout captured as it came.
# It runs in the script the capture action runs it in (actions/capture.go,
# monitorScript), ended by the end of its input: the agent's image has
# busybox's timeout, which leaves a zombie watcher behind in the agent.
MONITOR_SCRIPT='exec 3<&0; "$@" </dev/null & m=$!; (read -r _ <&3; kill $m) >/dev/null 2>&1 & r=$!; wait $m; s=$?; kill $r 2>/dev/null; wait $r; exit $s'
monitor() {
  local file=$1; shift
  local outf errf rc=0
  outf="$(mktemp)"; errf="$(mktemp)"
  sleep 8 | kc -n kube-system exec -i ds/cilium -c cilium-agent -- sh -c "$MONITOR_SCRIPT" m cilium-dbg monitor "$@" >"$outf" 2>"$errf" &
  local pid=$!
  sleep 2
  kc -n $NS exec intruder -- curl -sS -o /dev/null -m 2 "http://$API_IP:8080/" || true
  kc -n $NS exec intruder -- curl -sS -o /dev/null -m 2 "http://$API_IP:9005/" || true
  kc -n $NS exec frontend -- curl -sS -o /dev/null -m 5 "http://$API_IP:8080/" || true
  wait "$pid" || rc=$?
  # the end of the input kills the monitor: exit 143
  local hdr
  hdr="$(printf '# command: %s\n# cilium: v%s\n# tool: %s\n# exit: %s\n# ended: %s' "kubectl -n kube-system exec -i ds/cilium -c cilium-agent -- cilium-dbg monitor $*" "$CILIUM_V" "$V_DBG" "$rc" "after 8 s, by the end of its input (run in the capture action's script)")"
  { echo "$hdr"; cat "$outf"; } >"$OUT/$file"
  rm -f "$OUT/$file.stderr"
  if [[ -s $errf ]]; then { echo "$hdr"; cat "$errf"; } >"$OUT/$file.stderr"; fi
  rm -f "$outf" "$errf"
  log "captured $file (exit $rc)"
}
monitor cilium-dbg_monitor_j_n_type_drop.txt -j -n --type drop
monitor cilium-dbg_monitor_n_type_drop.txt -n --type drop
monitor cilium-dbg_monitor_type_drop.txt --type drop
monitor cilium-dbg_monitor_j_n_type_policy-verdict.txt -j -n --type policy-verdict
monitor cilium-dbg_monitor_j_n_type_trace_related.txt -j -n --type trace --related-to "$API_ID"

V_KUBECTL="kubectl $(kc version --client -o json | jq -r .clientVersion.gitVersion)"
K="kubectl -n $NS"
cap kubectl_get_cep.txt "$V_KUBECTL" "$K get cep -o wide" -- kc -n $NS get cep -o wide
cap kubectl_get_pods_wide.txt "$V_KUBECTL" "$K get pods -o wide" -- kc -n $NS get pods -o wide
kc delete cnp -n $NS api-deny >/dev/null
log "captures written to $OUT (namespace $NS left in place, without api-deny)"
