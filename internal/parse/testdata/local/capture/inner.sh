#!/bin/bash
# Runs inside a private mount+network namespace while /tmp/capbin holds
# tcx (lxccap0 ingress+egress) and generic-XDP (xdpcap0) attachments.
out=/tmp/capout
HDR="# captured: dev VM, private netns; Debian 12 tools (bpftool v7.1.0/libbpf 1.1, iproute2-6.1.0, iptables v1.8.9 nf_tables, net-tools 2.10, BusyBox v1.35.0, curl 7.88.1); stand-in programs/rules/servers, NOT the Cilium testbed"
cap() { # cap NAME COMMAND...: header lines, then stdout+stderr byte for byte
  local name=$1; shift
  "$@" > /tmp/cap.body 2>&1; local rc=$?
  { echo "# command: $*"; echo "$HDR"; echo "# exit: $rc"; cat /tmp/cap.body; } > "$out/$name.txt"
}
tc qdisc add dev legacy0 clsact
tc filter add dev legacy0 ingress bpf direct-action object-pinned /sys/fs/bpf/cap_tc_in
tc filter add dev legacy0 egress pref 2 bpf direct-action object-pinned /sys/fs/bpf/cap_tc_in

cap bpftool-net-show-all bpftool net show
cap bpftool-net-show-dev-tcx bpftool net show dev lxccap0
cap bpftool-net-show-dev-legacy bpftool net show dev legacy0
cap bpftool-net-show-json bpftool -j net show
cap bpftool-net-show-json-pretty bpftool -jp net show dev legacy0
cap bpftool-link-show bpftool link show
cap tc-filter-show-legacy-ingress tc filter show dev legacy0 ingress
cap tc-filter-show-legacy-egress tc filter show dev legacy0 egress
cap tc-filter-show-tcx-ingress tc filter show dev lxccap0 ingress
cap tc-filter-show-noqdisc tc filter show dev xdpcap0 ingress

# sockets: a server on 127.0.0.1:8080, a dual-stack one on [::]:8081, one on
# 10.99.0.1%legacy0-bound address, and clients that keep connections open.
python3 -m http.server --bind 127.0.0.1 8080 >/dev/null 2>&1 & s1=$!
python3 -m http.server --bind :: 8081 >/dev/null 2>&1 & s2=$!
python3 - <<'PY' &
import socket, time
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("fe80::1%legacy0", 2222, 0, 0)) if False else s.bind(("::1", 2222))
s.listen(5)
time.sleep(30)
PY
sleep 1.5
python3 - <<'PY' &
import socket, time
a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
a.bind(("127.0.0.1", 40404)); a.connect(("127.0.0.1", 8080))
b = socket.socket(); b.connect(("127.0.0.1", 8081))
c = socket.socket(socket.AF_INET6); c.connect(("::1", 2222))
time.sleep(20)
PY
sleep 1.5
cap ss-Htln ss -Htln
cap ss-Htn ss -Htn
cap ss-tln-header ss -tln
cap ss-Htlnp ss -Htlnp
cap ss-Htnp ss -Htnp
cap ss-Htln-sport-empty ss -Htln 'sport = :30780'
cap netstat-tn-nettools netstat -tn
cap netstat-tln-nettools netstat -tln
cap netstat-tn-busybox busybox netstat -tn
cap netstat-tnW-busybox busybox netstat -tnW

# curl write-out against the local server, a closed port and a dropped port.
iptables -A INPUT -p tcp --dport 9999 -j DROP
W='http_code=%{http_code}\ntime_total=%{time_total}\nexitcode=%{exitcode}\nremote_ip=%{remote_ip}\nremote_port=%{remote_port}\nerrormsg=%{errormsg}\n'
cap curl-w-kv-200 curl -s -o /dev/null -w "$W" http://127.0.0.1:8080/
cap curl-w-kv-refused curl -s -o /dev/null --connect-timeout 2 -w "$W" http://127.0.0.1:9/
cap curl-w-kv-timeout curl -s -o /dev/null --connect-timeout 1 -w "$W" http://127.0.0.1:9999/
cap curl-w-json-200 curl -s -o /dev/null -w '%{json}' http://127.0.0.1:8080/
cap curl-w-json-refused curl -s -o /dev/null -w '%{json}' http://127.0.0.1:9/
iptables -D INPUT -p tcp --dport 9999 -j DROP

# iptables: Cilium's chain layout (custom_chain.go) as a stand-in rule set.
for t in filter:CILIUM_INPUT:INPUT filter:CILIUM_OUTPUT:OUTPUT filter:CILIUM_FORWARD:FORWARD raw:CILIUM_OUTPUT_raw:OUTPUT raw:CILIUM_PRE_raw:PREROUTING nat:CILIUM_POST_nat:POSTROUTING nat:CILIUM_OUTPUT_nat:OUTPUT nat:CILIUM_PRE_nat:PREROUTING mangle:CILIUM_POST_mangle:POSTROUTING mangle:CILIUM_PRE_mangle:PREROUTING; do
  IFS=: read -r table chain hook <<<"$t"
  iptables -t "$table" -N "$chain"
  iptables -t "$table" -A "$hook" -m comment --comment "cilium-feeder: $chain" -j "$chain"
done
iptables -A CILIUM_INPUT -m mark --mark 0x200/0xf00 -m comment --comment "cilium: ACCEPT for proxy traffic" -j ACCEPT
iptables -A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT
iptables -t raw -A CILIUM_PRE_raw -m mark --mark 0x200/0xf00 -m comment --comment "cilium: NOTRACK for proxy traffic" -j CT --notrack
iptables -t nat -A CILIUM_POST_nat -s 10.42.0.0/24 ! -d 10.42.0.0/24 ! -o cilium_+ -m comment --comment "cilium masquerade non-cluster" -j MASQUERADE
iptables -N KUBE-FIREWALL
iptables -A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
iptables -P FORWARD DROP
cap iptables-save iptables-save
cap iptables-save-counters iptables-save -c
kill $s1 $s2 2>/dev/null
