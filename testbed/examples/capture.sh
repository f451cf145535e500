#!/usr/bin/env bash
# examples/capture.sh: deploy the cca-datapath scenario by hand on the running
# testbed and capture the raw output of every command the lab reads into
# testbed/captures/ (golden inputs for parser tests).
#
# Each capture file starts with a 4-line header, then the raw stdout exactly
# as printed (stderr, when there is any, goes to <file>.stderr with the same
# header):
#   # command: <the command, as run>
#   # cilium: v1.20.1
#   # tool: <version of the tool that printed it>
#   # exit: <exit code>
#
# Usage: testbed/examples/capture.sh [OUTDIR]   (default: testbed/captures)
set -euo pipefail
# (pipelines below read whole outputs first: with pipefail an early-exiting
# reader, e.g. head -n1, would fail the writer with SIGPIPE.)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TB="$(dirname "$HERE")"
source "$TB/lib/common.sh"
need_root
load_env || die "testbed is not up"
OUT="${1:-$TB/captures}"
mkdir -p "$OUT"
NE="$TB/node-exec"

AGENT=(kc -n kube-system exec ds/cilium -c cilium-agent --)
CILIUM_V="$("${AGENT[@]}" cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2}')"
[[ -n $CILIUM_V ]] || die "cannot read the agent's version"

# cap: see capture-lib.sh
source "$HERE/capture-lib.sh"

# ---- versions of the tools ---------------------------------------------------
V_DBG="cilium-dbg $("${AGENT[@]}" cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2, $3}')"
V_BPFTOOL="$(first_line "$NE" bpftool version)"
V_IPT="$(first_line "$NE" iptables-save --version)"
V_IPROUTE="$(first_line "$NE" ss -V)"
V_TC="$(first_line "$NE" tc -V)"
V_KUBECTL="kubectl $(kc version --client -o json | jq -r .clientVersion.gitVersion)"

# ---- the scenario ---------------------------------------------------------------
ready_count() { # NS DEPLOY
  kc -n "$1" get deploy "$2" -o jsonpath='{.status.readyReplicas}' 2>/dev/null
}
cluster_ip() { kc -n cca-dp get svc "$1" -o jsonpath='{.spec.clusterIP}'; }
# web frontend rows (slots) in bpf lb list
lb_slots() {
  local cip; cip="$(cluster_ip web)"
  "${AGENT[@]}" cilium-dbg bpf lb list 2>/dev/null | grep -c "^$cip:80/TCP (" || true
}
# the EndpointSlice's ready addresses == the backend count in the map?
eps_ready() {
  kc -n cca-dp get endpointslices -l kubernetes.io/service-name=web \
    -o jsonpath='{range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\n"}{end}' | grep -c . || true
}

web_ready_is() { [[ "$(ready_count cca-dp web)" == "$1" ]]; }
web_scaled() { web_ready_is 4 && [[ "$(lb_slots)" == 5 && "$(eps_ready)" == 4 ]]; }
holder_connected() { grep -q '^connected' <<<"$(kc -n cca-dp logs holder 2>/dev/null)"; }
probe_ready() { [[ "$(kc -n cca-dp get pod probe -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]; }
in_service_list() { grep -q -- "$1" <<<"$("${AGENT[@]}" cilium-dbg service list)"; }

kc apply -f "$HERE/web.yaml" >/dev/null
wait_for "2 web pods Ready" 120 "" web_ready_is 2
kc -n cca-dp scale deploy web --replicas 4 >/dev/null
wait_for "4 web pods Ready, 4 ready EndpointSlice addresses and 4 backend slots (+slot 0) in bpf lb list" 120 "" web_scaled
kc apply -f "$HERE/holder.yaml" >/dev/null
wait_for "holder logged its connection" 120 "" holder_connected
kc apply -f "$HERE/web-np.yaml" -f "$HERE/ghost.yaml" -f "$HERE/probe.yaml" >/dev/null
wait_for "probe pod Ready" 120 "" probe_ready
wait_for "NodePort 30780 in the agent's service list" 60 "" in_service_list ':30780/TCP'
wait_for "ghost in the agent's service list" 60 "" in_service_list " $(cluster_ip ghost):80/TCP"

HOLDER_ID="$(kc -n cca-dp get cep holder -o jsonpath='{.status.id}')"
HOLDER_IP="$(kc -n cca-dp get pod holder -o jsonpath='{.status.podIP}')"
LXC="$("${AGENT[@]}" cilium-dbg endpoint get "$HOLDER_ID" -o json | jq -r '.[0].status.networking["interface-name"]')"
# the web pod holder's connection went to (netstat in the backend must show holder:40404)
CT="$("${AGENT[@]}" cilium-dbg bpf ct list global)"
BACKEND="$(awk -v c="$HOLDER_IP:40404" '$1=="TCP" && $2=="OUT" && $3==c && !f {print $5; f=1}' <<<"$CT")"
BACKEND_POD="$(kc -n cca-dp get pods -l app=web -o json | jq -r --arg ip "${BACKEND%:*}" '.items[] | select(.status.podIP==$ip) | .metadata.name')"
GHOST_IP="$(cluster_ip ghost)"
log "holder: endpoint $HOLDER_ID ip $HOLDER_IP dev $LXC; backend $BACKEND ($BACKEND_POD); ghost $GHOST_IP"

# ---- captures -----------------------------------------------------------------
A="kubectl -n kube-system exec ds/cilium -c cilium-agent --"
cap cilium-dbg_status.txt "$V_DBG" "$A cilium-dbg status" -- "${AGENT[@]}" cilium-dbg status
cap cilium-dbg_status_verbose.txt "$V_DBG" "$A cilium-dbg status --verbose" -- "${AGENT[@]}" cilium-dbg status --verbose
cap cilium-dbg_status_brief.txt "$V_DBG" "$A cilium-dbg status --brief" -- "${AGENT[@]}" cilium-dbg status --brief
cap cilium-dbg_status_json.txt "$V_DBG" "$A cilium-dbg status -o json" -- "${AGENT[@]}" cilium-dbg status -o json
cap cilium-dbg_service_list.txt "$V_DBG" "$A cilium-dbg service list" -- "${AGENT[@]}" cilium-dbg service list
cap cilium-dbg_service_list_json.txt "$V_DBG" "$A cilium-dbg service list -o json" -- "${AGENT[@]}" cilium-dbg service list -o json
cap cilium-dbg_bpf_lb_list.txt "$V_DBG" "$A cilium-dbg bpf lb list" -- "${AGENT[@]}" cilium-dbg bpf lb list
cap cilium-dbg_bpf_ct_list_global.txt "$V_DBG" "$A cilium-dbg bpf ct list global" -- "${AGENT[@]}" cilium-dbg bpf ct list global
cap cilium-dbg_endpoint_list.txt "$V_DBG" "$A cilium-dbg endpoint list" -- "${AGENT[@]}" cilium-dbg endpoint list
cap cilium-dbg_endpoint_get_holder_json.txt "$V_DBG" "$A cilium-dbg endpoint get $HOLDER_ID -o json" -- "${AGENT[@]}" cilium-dbg endpoint get "$HOLDER_ID" -o json
cap cilium-dbg_map_list.txt "$V_DBG" "$A cilium-dbg map list" -- "${AGENT[@]}" cilium-dbg map list
cap cilium-dbg_config_a.txt "$V_DBG" "$A cilium-dbg config -a" -- "${AGENT[@]}" cilium-dbg config -a
cap cilium-dbg_map_list_json.txt "$V_DBG" "$A cilium-dbg map list -o json" -- "${AGENT[@]}" cilium-dbg map list -o json
# The agent's API on its Unix socket, as labrun's http action reads it (the
# documents cilium-dbg prints its answers from). The node has the socket at
# /var/run/cilium/cilium.sock; the host reaches it at $AGENT_SOCKET.
V_CURL="$(first_line curl --version)"
for api in healthz service map config "endpoint/$HOLDER_ID"; do
  f="agent_api_${api%%/*}.txt"
  [[ $api == endpoint/* ]] && f=agent_api_endpoint_holder.txt
  cap "$f" "$V_CURL" "curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/$api" -- \
    curl -sS --fail-with-body --unix-socket "$AGENT_SOCKET" "http://localhost/v1/$api"
done
cap cilium-dbg_version.txt "$V_DBG" "$A cilium-dbg version" -- "${AGENT[@]}" cilium-dbg version

N="node-exec"
cap node_bpftool_net_show.txt "$V_BPFTOOL" "$N bpftool net show" -- "$NE" bpftool net show
cap node_bpftool_net_show_dev_holder.txt "$V_BPFTOOL" "$N bpftool net show dev $LXC" -- "$NE" bpftool net show dev "$LXC"
cap node_bpftool_j_net_show_dev_holder.txt "$V_BPFTOOL" "$N bpftool -j net show dev $LXC" -- "$NE" bpftool -j net show dev "$LXC"
cap node_tc_filter_show_dev_holder_ingress.txt "$V_TC" "$N tc filter show dev $LXC ingress" -- "$NE" tc filter show dev "$LXC" ingress
cap node_iptables-save.txt "$V_IPT" "$N iptables-save" -- "$NE" iptables-save
cap node_ss_Htln.txt "$V_IPROUTE" "$N ss -Htln" -- "$NE" ss -Htln
cap node_ss_Htln_sport_30780.txt "$V_IPROUTE" "$N ss -Htln 'sport = :30780'" -- "$NE" ss -Htln 'sport = :30780'
cap node_ss_Htn.txt "$V_IPROUTE" "$N ss -Htn" -- "$NE" ss -Htn
cap node_curl_nodeport_30780.txt "$(first_line "$NE" curl --version)" \
  "$N curl -s -o /dev/null -w '%{http_code} %{time_total}' http://$NODE_IP:30780/" -- \
  "$NE" curl -s -o /dev/null -w '%{http_code} %{time_total}' "http://$NODE_IP:30780/"

K="kubectl -n cca-dp"
BB="$(first_line kc -n cca-dp exec holder -- busybox)"
cap pod_holder_netstat_tn.txt "$BB" "$K exec holder -- netstat -tn" -- kc -n cca-dp exec holder -- netstat -tn
cap pod_web_backend_netstat_tn.txt "$BB" "$K exec $BACKEND_POD -- netstat -tn" -- kc -n cca-dp exec "$BACKEND_POD" -- netstat -tn
cap pod_holder_logs.txt "$V_KUBECTL" "$K logs holder" -- kc -n cca-dp logs holder
CURLV="$(first_line kc -n cca-dp exec probe -- curl --version)"
cap pod_probe_curl_ghost.txt "$CURLV" \
  "$K exec probe -- curl -sS -m 5 -o /dev/null -w '%{http_code} %{time_total}' http://$GHOST_IP:80/" -- \
  kc -n cca-dp exec probe -- curl -sS -m 5 -o /dev/null -w '%{http_code} %{time_total}' "http://$GHOST_IP:80/"
cap pod_probe_curl_web.txt "$CURLV" \
  "$K exec probe -- curl -sS -m 5 -o /dev/null -w '%{http_code} %{time_total}' http://$(cluster_ip web):80/" -- \
  kc -n cca-dp exec probe -- curl -sS -m 5 -o /dev/null -w '%{http_code} %{time_total}' "http://$(cluster_ip web):80/"

cap kubectl_get_cep_holder_json.txt "$V_KUBECTL" "$K get cep holder -o json" -- kc -n cca-dp get cep holder -o json
cap kubectl_get_endpointslices_web_json.txt "$V_KUBECTL" "$K get endpointslices -l kubernetes.io/service-name=web -o json" -- \
  kc -n cca-dp get endpointslices -l kubernetes.io/service-name=web -o json
cap kubectl_get_pods_wide.txt "$V_KUBECTL" "$K get pods -o wide" -- kc -n cca-dp get pods -o wide
cap kubectl_get_svc.txt "$V_KUBECTL" "$K get svc -o wide" -- kc -n cca-dp get svc -o wide
cap kubectl_get_node_wide.txt "$V_KUBECTL" "kubectl get node -o wide" -- kc get node -o wide
log "captures written to $OUT"
