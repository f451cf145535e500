#!/usr/bin/env bash
# Check of the classroom lab (playbooks/classroom.yaml) in one learner's
# namespace, in bash, the way a lab author writes a grader today: kubectl
# reads the Deployment, the pods, the Service, its EndpointSlices and the
# CiliumNetworkPolicy once each, client and intruder make one request each
# (intruder's dropped one waits out curl's 3 s limit, as labrun check's
# does), the answering pod's log is read, and jq derives every value the
# learner's 4 files must hold and compares each file with it. It changes
# nothing, like `labrun check playbooks/classroom.yaml`, which the bench's
# class section measures it against (-class-lab classroom).
#
# Usage: testbed/bench/classroom-check.sh NAMESPACE OUTDIR
# Prints one line per file (ok, or FAIL with the file's value and the
# live one) and exits 1 when a file is missing or differs. KUBECTL and
# KUBECONFIG as testbed/bench/cca-datapath.sh.
set -euo pipefail

ns=${1:?usage: classroom-check.sh NAMESPACE OUTDIR}
out=${2:?usage: classroom-check.sh NAMESPACE OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
k() { "$KUBECTL" -n "$ns" "$@"; }

k get deployment web -o json >"$tmp/deploy"
k get pods -o json >"$tmp/pods"
k get service web -o json >"$tmp/svc"
k get endpointslices -l kubernetes.io/service-name=web -o json >"$tmp/slices"
k get ciliumnetworkpolicy web-from-client -o json >"$tmp/cnp"
ip=$(jq -r .spec.clusterIP "$tmp/svc")
k exec client -- curl -s -m 3 -w '\n%{http_code}' "http://$ip:80/" >"$tmp/client" || true
intruder_exit=0
k exec intruder -- curl -s -o /dev/null -m 3 "http://$ip:80/" >/dev/null 2>&1 || intruder_exit=$?
served=$(head -n 1 "$tmp/client")
# the kubelet serves the server's line a moment after it answered: read
# the log until it has client's request, for at most 15 s (as the lab)
client_ip=$(jq -r '.items[] | select(.metadata.name == "client") | .status.podIP' "$tmp/pods")
for ((deadline = SECONDS + 15; SECONDS < deadline; )); do
  k logs "$served" >"$tmp/log" 2>/dev/null || true
  awk -v ip="$client_ip " 'index($0, ip) == 1 && index($0, "\"GET / HTTP/1.1\" 200") { found = 1 } END { exit !found }' "$tmp/log" && break
done

# shellcheck disable=SC2016 # jq's $variables
expect='
def labels($m): [$m | to_entries[] | "\(.key)=\(.value)"] | sort | join(",");
def pod($n): [$pods.items[] | select(.metadata.name == $n)][0];
def web: [$pods.items[] | select(.metadata.labels.app == "web")];
def ready: [$slices.items[].endpoints // [] | .[] | select(.conditions.ready // false) | .addresses[0]] | sort;
{
  deploy: {deployment: $deploy.metadata.name, selector: labels($deploy.spec.selector.matchLabels),
    image: $deploy.spec.template.spec.containers[0].image, container_port: $deploy.spec.template.spec.containers[0].ports[0].containerPort,
    client_ip: pod("client").status.podIP, intruder_ip: pod("intruder").status.podIP},
  scale: {replicas: $deploy.spec.replicas, ready_replicas: ($deploy.status.readyReplicas // 0),
    pods: [web[].metadata.name] | sort, pod_ips: [web[].status.podIP] | sort},
  expose: {service: $svc.metadata.name, cluster_ip: $svc.spec.clusterIP, port: $svc.spec.ports[0].port,
    target_port: $svc.spec.ports[0].targetPort, endpoints: ready, http_code: ($client | split("\n") | last | tonumber? // 0)},
  policy: {policy: $cnp.metadata.name, endpoint_selector: labels($cnp.spec.endpointSelector.matchLabels),
    from: labels($cnp.spec.ingress[0].fromEndpoints[0].matchLabels),
    port: "\($cnp.spec.ingress[0].toPorts[0].ports[0].port)/\($cnp.spec.ingress[0].toPorts[0].ports[0].protocol)",
    valid: any($cnp.status.conditions // [] | .[]; .type == "Valid" and .status == "True"),
    client_http_code: ($client | split("\n") | last | tonumber? // 0), intruder_curl_exit: $intruder,
    client_in_log: any($log | split("\n")[]; startswith(pod("client").status.podIP + " ") and contains("\"GET / HTTP/1.1\" 200"))}
}'
jq -n --slurpfile d "$tmp/deploy" --slurpfile p "$tmp/pods" --slurpfile s "$tmp/svc" --slurpfile e "$tmp/slices" \
  --slurpfile c "$tmp/cnp" --rawfile client "$tmp/client" --rawfile log "$tmp/log" --argjson intruder "$intruder_exit" \
  '$d[0] as $deploy | $p[0] as $pods | $s[0] as $svc | $e[0] as $slices | $c[0] as $cnp | '"$expect" >"$tmp/expect"

failed=0
for f in deploy scale expose policy; do
  if [[ ! -f $out/$f.json ]]; then
    echo "$f.json: FAIL: missing"
    failed=1
    continue
  fi
  # served_by is any of web's pods (each request picks one), the rest equal
  diff=$(jq -c --slurpfile want "$tmp/expect" --arg f "$f" --slurpfile p "$tmp/pods" '
    . as $got | $want[0][$f] as $w
    | [($w | keys[]) as $k | select($got[$k] != $w[$k]) | {key: $k, file: $got[$k], live: $w[$k]}]
    + (if $f == "expose" and ([$p[0].items[] | select(.metadata.labels.app == "web") | .metadata.name] | index($got.served_by) | not)
       then [{key: "served_by", file: $got.served_by}] else [] end)' "$out/$f.json")
  if [[ $diff == "[]" ]]; then
    echo "$f.json: ok"
  else
    echo "$f.json: FAIL: $diff"
    failed=1
  fi
done
exit "$failed"
