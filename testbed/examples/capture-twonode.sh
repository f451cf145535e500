#!/usr/bin/env bash
# examples/capture-twonode.sh: on a running two-node testbed (profile tunnel
# or native), deploy a backend pod on node 2 and capture what node 1's and
# node 2's agents print about the other node into
# testbed/captures/<profile>/ (golden inputs for parser tests). Same file
# format as capture.sh: a 4-line header, then the raw stdout.
#
# Usage: testbed/examples/capture-twonode.sh [OUTDIR]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TB="$(dirname "$HERE")"
source "$TB/lib/common.sh"
need_root
load_env || die "testbed is not up"
[[ ${NODES:-1} -ge 2 ]] || die "profile ${PROFILE:-single} has one node; run testbed/up --profile tunnel (or native)"
OUT="${1:-$TB/captures/$PROFILE}"
mkdir -p "$OUT"

# agent_on NODE: the Cilium agent pod on NODE.
agent_on() {
  kc -n kube-system get pods -l k8s-app=cilium --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'
}
A1="$(agent_on "$(node_name 1)")"; A2="$(agent_on "$(node_name 2)")"
[[ -n $A1 && -n $A2 ]] || die "no agent pod on each node"
CILIUM_V="$(kc -n kube-system exec "$A1" -c cilium-agent -- cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2}')"
V_DBG="cilium-dbg $(kc -n kube-system exec "$A1" -c cilium-agent -- cilium-dbg version 2>/dev/null | awk '/^Client:/{print $2, $3}')"
V_KUBECTL="kubectl $(kc version --client -o json | jq -r .clientVersion.gitVersion)"

# cap: see capture-lib.sh
source "$HERE/capture-lib.sh"
V_CURL="$(first_line curl --version)"

# ---- the scenario: a backend on node 2, a client on node 1 -----------------
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: capture-2n}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: capture-2n, labels: {app: web}}
spec:
  nodeName: $(node_name 2)
  terminationGracePeriodSeconds: 1
  containers:
  - {name: web, image: $PYTHON_IMAGE, imagePullPolicy: IfNotPresent, command: [python3, -m, http.server, "8080"],
     readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: capture-2n}
spec:
  nodeName: $(node_name 1)
  terminationGracePeriodSeconds: 1
  containers:
  - {name: curl, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: capture-2n}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
YAML
wait_for "pods web (node 2) and client (node 1) Ready" 120 "" \
  bash -c "[[ \$('$KUBECTL' --kubeconfig '$KUBECONFIG_PATH' -n capture-2n get pods -o jsonpath='{.items[*].status.conditions[?(@.type==\"Ready\")].status}') == 'True True' ]]"
WEB_IP="$(kc -n capture-2n get pod web -o jsonpath='{.status.podIP}')"
wait_for "web's IP $WEB_IP in node 1's ipcache" 60 "" \
  bash -c "'$KUBECTL' --kubeconfig '$KUBECONFIG_PATH' -n kube-system exec '$A1' -c cilium-agent -- cilium-dbg bpf ipcache get '$WEB_IP' | grep -q identity"

# ---- captures ----------------------------------------------------------------
for n in 1 2; do
  a="$A1"; [[ $n == 1 ]] || a="$A2"
  dbg() { kc -n kube-system exec "$a" -c cilium-agent -- cilium-dbg "$@"; }
  shown="kubectl -n kube-system exec <agent on $(node_name "$n")> -c cilium-agent -- cilium-dbg"
  cap "node${n}_cilium-dbg_status_verbose.txt" "$V_DBG" "$shown status --verbose" -- dbg status --verbose
  cap "node${n}_cilium-dbg_bpf_ipcache_list.txt" "$V_DBG" "$shown bpf ipcache list" -- dbg bpf ipcache list
  cap "node${n}_cilium-dbg_node_list.txt" "$V_DBG" "$shown node list" -- dbg node list
  cap "node${n}_cilium-dbg_bpf_tunnel_list.txt" "$V_DBG" "$shown bpf tunnel list" -- dbg bpf tunnel list
  cap "node${n}_cilium-dbg_endpoint_list.txt" "$V_DBG" "$shown endpoint list" -- dbg endpoint list
  cap "node${n}_cilium-dbg_identity_list.txt" "$V_DBG" "$shown identity list" -- dbg identity list
  cap "node${n}_cilium-dbg_service_list.txt" "$V_DBG" "$shown service list" -- dbg service list
  cap "node${n}_cilium-dbg_bpf_lb_list.txt" "$V_DBG" "$shown bpf lb list" -- dbg bpf lb list
  # The same agent's API on its Unix socket, right after the commands
  # above, as labrun's http action reads it (a node has the socket at
  # /var/run/cilium/cilium.sock; the host reaches node N's through the
  # testbed's view of that directory).
  sock="$(node_cilium_run "$n")/cilium.sock"
  for api in healthz endpoint identity; do
    cap "node${n}_agent_api_${api}.txt" "$V_CURL" "curl -s --unix-socket /var/run/cilium/cilium.sock http://localhost/v1/$api" -- \
      curl -sS --fail-with-body --unix-socket "$sock" "http://localhost/v1/$api"
  done
done
# web's policy map, in node 2's agent (its endpoint id from its CiliumEndpoint)
WEB_EP="$(kc -n capture-2n get ciliumendpoint web -o jsonpath='{.status.id}')"
a="$A2"
cap "node2_cilium-dbg_bpf_policy_get_n_web.txt" "$V_DBG" "kubectl -n kube-system exec <agent on $(node_name 2)> -c cilium-agent -- cilium-dbg bpf policy get -n <web's endpoint id>" -- dbg bpf policy get -n "$WEB_EP"
cap kubectl_get_nodes_wide.txt "$V_KUBECTL" "kubectl get nodes -o wide" -- kc get nodes -o wide
cap kubectl_get_pods_wide.txt "$V_KUBECTL" "kubectl -n capture-2n get pods -o wide" -- kc -n capture-2n get pods -o wide
cap kubectl_get_ciliumnodes_json.txt "$V_KUBECTL" "kubectl get ciliumnodes -o json" -- kc get ciliumnodes -o json
kc delete namespace capture-2n --wait=false >/dev/null
log "captures in $OUT"
