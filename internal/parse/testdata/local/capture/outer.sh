set -e
mount -t bpf bpf /sys/fs/bpf
ip link set lo up
ip link add lxccap0 type veth peer name lxccap0p
ip link add legacy0 type veth peer name legacy0p
ip link add xdpcap0 type veth peer name xdpcap0p
for d in lxccap0 lxccap0p legacy0 legacy0p xdpcap0 xdpcap0p; do ip link set $d up; done
ip addr add 10.99.0.1/24 dev legacy0
/tmp/capbin lxccap0 /sys/fs/bpf/cap_tc_in /tmp/cap/inner.sh
