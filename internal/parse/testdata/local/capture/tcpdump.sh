#!/bin/bash
# Captures tcpdump's line format for the tcpdump parser's tests, in a
# private network namespace: run as root with
#   unshare -m -n bash internal/parse/testdata/local/capture/tcpdump.sh OUTDIR
# A veth pair to a second namespace ("peer", 10.98.0.2, fd98::2), a VXLAN
# device over it on Cilium's port 8472 (which tcpdump names OTV) and one on
# the IANA port 4789, and traffic of each kind a lab sees: TCP accepted,
# TCP refused (RST), UDP, DNS, ICMP echo and port unreachable, ICMPv6,
# ARP, and TCP inside the tunnels. Each file: a header, then tcpdump's
# stdout byte for byte (its stderr in NAME.txt.stderr).
set -euo pipefail
out=${1:?usage: tcpdump.sh OUTDIR}
mkdir -p "$out"
TOOL="$(tcpdump --version 2>&1 | head -n1), $(tcpdump --version 2>&1 | sed -n 2p)"
HDR="# captured: dev VM, private netns; Debian 12 $TOOL; stand-in traffic, NOT the Cilium testbed"

mount -t tmpfs tmpfs /run
mkdir -p /run/netns
ip link set lo up
ip netns add peer
ip link add veth0 type veth peer name veth1
ip link set veth1 netns peer
ip addr add 10.98.0.1/24 dev veth0
ip -6 addr add fd98::1/64 dev veth0 nodad
ip link set veth0 up
P() { ip netns exec peer "$@"; }
P ip link set lo up
P ip addr add 10.98.0.2/24 dev veth1
P ip -6 addr add fd98::2/64 dev veth1 nodad
P ip link set veth1 up
for spec in "vxlan0 42 8472 10.97.0" "vxlan1 43 4789 10.96.0"; do
  read -r dev vni port net <<<"$spec"
  ip link add "$dev" type vxlan id "$vni" dstport "$port" remote 10.98.0.2 local 10.98.0.1 dev veth0
  ip addr add "$net.1/24" dev "$dev"; ip link set "$dev" up
  P ip link add "$dev" type vxlan id "$vni" dstport "$port" remote 10.98.0.1 local 10.98.0.2 dev veth1
  P ip addr add "$net.2/24" dev "$dev"; P ip link set "$dev" up
done
# servers in the peer: HTTP on 8080 (both families), UDP echo on 9999, a
# DNS-shaped answerer on 53; nothing on 8081 (RST) or UDP 9998 (ICMP)
P python3 -m http.server --bind 0.0.0.0 8080 >/dev/null 2>&1 &
P python3 -m http.server --bind :: 8082 >/dev/null 2>&1 &
P socat -T1 UDP4-RECVFROM:9999,fork EXEC:cat >/dev/null 2>&1 &
for _ in $(seq 100); do
  curl -s -o /dev/null -m 1 http://10.98.0.2:8080/ && curl -s -o /dev/null -m 1 "http://[fd98::2]:8082/" && break
  sleep 0.1
done

# cap NAME SECONDS TCPDUMP_ARGS... -- TRAFFIC...: tcpdump for SECONDS while
# the traffic runs (started once tcpdump says it is listening).
cap() {
  local name=$1 secs=$2; shift 2
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  tcpdump "${args[@]}" >"/tmp/td.out" 2>"/tmp/td.err" &
  local pid=$!
  for _ in $(seq 50); do grep -q "listening on" /tmp/td.err && break; sleep 0.1; done
  "$@" >/dev/null 2>&1 || true
  sleep "$secs"
  kill -INT "$pid"; local rc=0; wait "$pid" || rc=$?
  { echo "# command: tcpdump ${args[*]}"; echo "$HDR"; echo "# exit: $rc"; cat /tmp/td.out; } >"$out/$name.txt"
  { echo "# command: tcpdump ${args[*]}"; echo "$HDR"; echo "# exit: $rc"; cat /tmp/td.err; } >"$out/$name.txt.stderr"
}

traffic_tcp() {
  curl -s -o /dev/null -m 2 http://10.98.0.2:8080/
  curl -s -o /dev/null -m 2 http://10.98.0.2:8081/
  curl -s -o /dev/null -m 2 "http://[fd98::2]:8082/"
}
traffic_udp() {
  echo hello | socat -T1 - UDP4:10.98.0.2:9999
  echo hello | socat -T1 - UDP4:10.98.0.2:9998
  python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
q = bytes.fromhex("123401000001000000000000037777770765786" "16d706c6503636f6d0000010001")
s.sendto(q, ("10.98.0.2", 53))
PY
}
traffic_icmp() {
  busybox ping -c 2 -i 0.2 -W 1 10.98.0.2
  busybox ping -6 -c 1 -W 1 fd98::2
}
traffic_arp() {
  ip neigh flush dev veth0
  busybox ping -c 1 -W 1 10.98.0.2
}
traffic_tunnel() {
  busybox ping -c 1 -W 1 10.97.0.2
  curl -s -o /dev/null -m 2 http://10.97.0.2:8080/
  busybox ping -c 1 -W 1 10.96.0.2
}
traffic_all() { traffic_arp; traffic_tcp; traffic_udp; traffic_icmp; traffic_tunnel; }

cap tcpdump_l_n_i_veth0_tcp 1 -l -n -i veth0 tcp -- traffic_tcp
cap tcpdump_l_n_i_veth0_udp_icmp 1 -l -n -i veth0 'udp or icmp' -- traffic_udp
cap tcpdump_l_n_i_veth0_icmp_icmp6_arp 1 -l -n -i veth0 'icmp or icmp6 or arp' -- traffic_all
cap tcpdump_l_n_i_any 1 -l -n -i any 'not port 22' -- traffic_all
cap tcpdump_l_n_i_veth0_vxlan 1 -l -n -i veth0 'udp port 8472 or udp port 4789' -- traffic_tunnel
cap tcpdump_l_n_i_vxlan0 1 -l -n -i vxlan0 -- traffic_tunnel
cap tcpdump_l_n_tttt_i_veth0 1 -l -n -tttt -i veth0 tcp -- traffic_tcp
cap tcpdump_l_n_tt_i_veth0 1 -l -n -tt -i veth0 icmp -- traffic_icmp
cap tcpdump_l_n_e_i_veth0 1 -l -n -e -i veth0 'icmp or arp' -- traffic_arp
cap tcpdump_l_n_i_veth0_nothing 1 -l -n -i veth0 'port 1' -- traffic_tcp
