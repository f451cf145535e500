#!/usr/bin/env bash
# Solution of the classroom lab (playbooks/classroom.yaml, docs/labs.md "The
# classroom lab") in bash, the way a learner with only their namespace
# writes one: kubectl apply, scale, expose, exec, logs; jq and awk to pick
# the values out; polling loops without sleeps (each try is one round
# trip). A learner's account can do nothing outside the namespace, so,
# like the lab, it reads no node, no agent and no BPF map: no cilium-dbg
# and no node shell. It writes the lab's 4 files, each value read from the
# live cluster in this run, with the keys in the order the lab lists them.
#
# It gets there by a learner's means, not the playbook's: client-side
# kubectl apply of manifests of its own, kubectl scale, the Service made by
# kubectl expose, the values picked out of kubectl's JSON by jq and of
# web's log by awk. It is idempotent like the playbook: run again, or on a
# namespace the playbook solved, it changes nothing (web's pod template
# is the playbook's in what both set, so no rollout starts) and writes
# the same files.
#
# Usage (from the repository root, on the test cluster, any profile):
#   kubectl create namespace NS   # the instructor's part
#   testbed/bench/classroom.sh NS OUTDIR
# Then `labrun check --vars playbooks/classroom.testbed.yaml --set
# namespace=NS --set out=OUTDIR playbooks/classroom.yaml` must pass every
# task (testbed/e2e/solutions_test.go).
# Environment (defaults are the test cluster's): KUBECTL, KUBECONFIG,
# CURL_IMAGE, HTTP_IMAGE; BENCH_WAITS: a file to write the microseconds
# spent waiting for pods, endpoints and the policy into.
set -euo pipefail

ns=${1:?usage: testbed/bench/classroom.sh NAMESPACE OUTDIR}
out=${2:?usage: testbed/bench/classroom.sh NAMESPACE OUTDIR}
KUBECTL=${KUBECTL:-/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl}
export KUBECONFIG=${KUBECONFIG:-/var/lib/labrun-testbed/kubeconfig}
CURL_IMAGE=${CURL_IMAGE:-labrun.local/curl:7.88.1}
HTTP_IMAGE=${HTTP_IMAGE:-labrun.local/python:3.11.2}
replicas=3

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "classroom.sh: $*" >&2; exit 1; }
k() { "$KUBECTL" -n "$ns" "$@"; }

# try_for LIMIT CMD...: run CMD until it succeeds, at most LIMIT seconds;
# fails when it never did.
try_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
	done
}
# poll LIMIT CMD...: try_for, and give up when CMD never succeeded.
poll() { try_for "$@" || die "timed out after ${1}s: ${*:2}"; }
# wait_for LIMIT CMD...: poll, for what the cluster does; its time is counted.
waited_us=0
wait_for() {
	local start=${EPOCHREALTIME/[.,]/}
	poll "$@"
	waited_us=$((waited_us + ${EPOCHREALTIME/[.,]/} - start))
}
# labels: a matchLabels object on stdin as key=value,... sorted.
labels() { jq -r 'to_entries | map("\(.key)=\(.value)") | sort | join(",")'; }

# ---- 1. deploy.json -----------------------------------------------------------
# web has no replicas in its manifest: kubectl scale owns them below, and
# a second run does not take them back to 1.
k apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: $HTTP_IMAGE
        imagePullPolicy: IfNotPresent
        # the page is the pod's own name
        command: [sh, -c, "mkdir -p /tmp/www && hostname > /tmp/www/index.html && exec python3 -m http.server 8080 -d /tmp/www"]
        ports:
        - containerPort: 8080
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: client
  labels: {app: client}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: client, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}
---
apiVersion: v1
kind: Pod
metadata:
  name: intruder
  labels: {app: intruder}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: intruder, image: $CURL_IMAGE, imagePullPolicy: IfNotPresent, command: [sleep, "86400"]}
EOF

# ready NAME: pod NAME is Ready.
ready() { [ "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for 180 ready client
wait_for 180 ready intruder
k get deployment web -o json >"$tmp/web.json"
k get pods client intruder -o json >"$tmp/probes.json"
ip_of() { jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .status.podIP' "$tmp/probes.json"; }
client_ip=$(ip_of client)
intruder_ip=$(ip_of intruder)
jq --arg cip "$client_ip" --arg iip "$intruder_ip" --arg sel "$(jq '.spec.selector.matchLabels' "$tmp/web.json" | labels)" \
	'.spec.template.spec.containers[0] as $c |
	 {deployment: .metadata.name, selector: $sel, image: $c.image, container_port: $c.ports[0].containerPort,
	  client_ip: $cip, intruder_ip: $iip}' "$tmp/web.json" >"$out/deploy.json"

# ---- 2. scale.json ------------------------------------------------------------
k scale deployment web --replicas "$replicas" >/dev/null
# scaled: exactly 3 pods of web (terminating ones count), all Ready, and
# the Deployment counting them; the pods are left in $tmp/web_pods.json.
scaled() {
	k get pods -l app=web -o json >"$tmp/web_pods.json" &&
		jq -e --argjson n "$replicas" '(.items | length) == $n and
			all(.items[]; .metadata.deletionTimestamp == null and any(.status.conditions[]?; .type == "Ready" and .status == "True"))' \
			"$tmp/web_pods.json" >/dev/null &&
		k get deployment web -o json >"$tmp/web.json" &&
		jq -e --argjson n "$replicas" '(.status.readyReplicas // 0) == $n' "$tmp/web.json" >/dev/null
}
wait_for 180 scaled
jq -r '.items[].metadata.name' "$tmp/web_pods.json" | sort >"$tmp/pod_names"
jq -r '.items[].status.podIP' "$tmp/web_pods.json" | sort >"$tmp/pod_ips"
jq --rawfile names "$tmp/pod_names" --rawfile ips "$tmp/pod_ips" \
	'{replicas: .spec.replicas, ready_replicas: (.status.readyReplicas // 0),
	  pods: ($names | split("\n") | map(select(. != ""))), pod_ips: ($ips | split("\n") | map(select(. != "")))}' \
	"$tmp/web.json" >"$out/scale.json"

# ---- 3. expose.json -----------------------------------------------------------
k expose deployment web --name web --port 80 --target-port 8080 --dry-run=client -o yaml | k apply -f - >/dev/null
k get service web -o json >"$tmp/svc.json"
cluster_ip=$(jq -r .spec.clusterIP "$tmp/svc.json")
# endpoints: the EndpointSlices of Service web list exactly web's pods as
# ready; the ready addresses are left in $tmp/endpoints, sorted.
endpoints() {
	k get endpointslices -l kubernetes.io/service-name=web -o json |
		jq -r '.items[].endpoints // [] | .[] | select(.conditions.ready) | .addresses[0]' | sort >"$tmp/endpoints" &&
		cmp -s "$tmp/endpoints" "$tmp/pod_ips"
}
wait_for 60 endpoints
# answered POD: POD's request to Service web (3 s limit) got HTTP 200; the
# body (the serving pod's name) and the code are left in $tmp/POD.
answered() {
	k exec "$1" -- curl -s -m 3 -w '\n%{http_code}' "http://$cluster_ip:80/" >"$tmp/$1" 2>/dev/null &&
		[ "$(tail -n 1 "$tmp/$1")" = 200 ]
}
poll 60 answered client
jq --slurpfile e <(jq -R . "$tmp/endpoints" | jq -s .) --arg served "$(head -n 1 "$tmp/client")" \
	--argjson code "$(tail -n 1 "$tmp/client")" \
	'{service: .metadata.name, cluster_ip: .spec.clusterIP, port: .spec.ports[0].port, target_port: .spec.ports[0].targetPort,
	  endpoints: $e[0], http_code: $code, served_by: $served}' "$tmp/svc.json" >"$out/expose.json"

# ---- 4. policy.json -----------------------------------------------------------
k apply -f - >/dev/null <<EOF
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: web-from-client
spec:
  endpointSelector:
    matchLabels: {app: web}
  ingress:
  - fromEndpoints:
    - matchLabels: {app: client}
    toPorts:
    - ports:
      - {port: "8080", protocol: TCP}
EOF
# valid: Cilium set the policy's condition Valid to True.
valid() { [ "$(k get cnp web-from-client -o jsonpath='{.status.conditions[?(@.type=="Valid")].status}')" = True ]; }
wait_for 60 valid
# dropped: intruder's request to Service web gets no answer (curl's exit
# code, 28 when it gives up at its limit, is left in $intruder_exit).
dropped() {
	intruder_exit=0
	k exec intruder -- curl -s -o /dev/null -m 3 "http://$cluster_ip:80/" 2>/dev/null || intruder_exit=$?
	[ "$intruder_exit" != 0 ]
}
wait_for 60 dropped
poll 60 answered client
served=$(head -n 1 "$tmp/client")
# logged: the log of the pod that answered has client's request; python's
# http.server logs `IP - - [date] "GET / HTTP/1.1" 200 -` as it answers,
# and the kubelet serves the line a moment later.
logged() {
	k logs "$served" >"$tmp/log" &&
		awk -v ip="$client_ip " 'index($0, ip) == 1 && index($0, "\"GET / HTTP/1.1\" 200") { found = 1 } END { exit !found }' "$tmp/log"
}
in_log=false
if try_for 15 logged; then in_log=true; fi
k get cnp web-from-client -o json >"$tmp/cnp.json"
jq --arg sel "$(jq '.spec.endpointSelector.matchLabels' "$tmp/cnp.json" | labels)" \
	--arg from "$(jq '.spec.ingress[0].fromEndpoints[0].matchLabels' "$tmp/cnp.json" | labels)" \
	--argjson code "$(tail -n 1 "$tmp/client")" --argjson exit "$intruder_exit" --argjson in_log "$in_log" \
	'.spec.ingress[0].toPorts[0].ports[0] as $p |
	 {policy: .metadata.name, endpoint_selector: $sel, from: $from, port: "\($p.port)/\($p.protocol)",
	  valid: any(.status.conditions[]?; .type == "Valid" and .status == "True"),
	  client_http_code: $code, intruder_curl_exit: $exit, client_in_log: $in_log}' "$tmp/cnp.json" >"$out/policy.json"

if [ -n "${BENCH_WAITS:-}" ]; then echo "$waited_us" >"$BENCH_WAITS"; fi
