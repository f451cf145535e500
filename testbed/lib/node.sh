# shellcheck shell=bash
# The node's namespaces, cgroups and processes (sourced by up/down/status).
#
# Layout (see README.md):
# - one network namespace (the node) holds everything: control plane,
#   containerd, kubelet, Cilium, the pods' veths. A veth pair links it to the
#   host: $HOST_VETH ($HOST_IP) <-> $NODE_DEV ($NODE_IP, the node IP).
# - one mount namespace (the node's) with a private /run, a sysfs of the node
#   netns, its own bpffs at /sys/fs/bpf, cgroup2 of the testbed at
#   /run/cilium/cgroupv2, read-only VM-wide /proc/sys, and a few bind mounts
#   so kubelet and Cilium find their usual paths.
# - the same bpffs instance is also mounted read-only on the host at $BPFFS,
#   so that programs on the host (labrun's bpfmap) can read Cilium's pins.
# - both are kept alive by bind mounts of their nsfs files under $NSDIR.
# - one cgroup subtree $CG_BASE in every hierarchy, nested under the cgroup of
#   the process that ran `up`.

# record KIND PATH: remember a host-side object the testbed created.
record() { echo "$1 $2" >>"$CREATED"; }

# mk_cgroup HIERARCHY_MOUNT REL_PATH: create REL_PATH (and any missing parent)
# in one hierarchy, recording each directory it had to create. cpuset v1
# needs cpus/mems filled in before a task can join, so copy the parent's.
mk_cgroup() {
  local m=$1 rel=$2 cur="" part
  local -a parts
  IFS=/ read -ra parts <<<"${rel#/}"
  for part in "${parts[@]}"; do
    [[ -n $part ]] || continue
    cur+="/$part"
    [[ -d $m$cur ]] && continue
    mkdir "$m$cur"
    record cgroup "$m$cur"
    if [[ -f $m$cur/cpuset.cpus ]]; then
      cat "$(dirname "$m$cur")/cpuset.cpus" >"$m$cur/cpuset.cpus"
      cat "$(dirname "$m$cur")/cpuset.mems" >"$m$cur/cpuset.mems"
    fi
  done
}

setup_cgroups() {
  local m
  for m in $(cgroup_mounts); do
    mk_cgroup "$m" "$CG_BASE/system"
    mk_cgroup "$m" "$CG_BASE/node-exec"
  done
}

# cgroup_pids: every process in the testbed's cgroup subtree (unified
# hierarchy, which runc also uses for containers in hybrid mode), plus the v1
# memory one for safety. These are all processes the testbed started.
# cgroup_pids [SUBDIR]: only those under $CG_BASE/SUBDIR.
cgroup_pids() {
  local m
  for m in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/pids; do
    [[ -d $m$CG_BASE/${1:-} ]] || continue
    find "$m$CG_BASE/${1:-}" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

# remove_cgroups: rmdir the whole subtree (deepest first) in every hierarchy,
# then the parents `up` had to create (recorded in $CREATED).
remove_cgroups() {
  local m
  for m in $(cgroup_mounts); do
    [[ -d $m$CG_BASE ]] && find "$m$CG_BASE" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [[ -f $CREATED ]]; then
    local kind path
    tac "$CREATED" | while read -r kind path; do
      [[ $kind == cgroup && -d $path ]] && rmdir "$path" 2>/dev/null || true
    done
  fi
}

# The kubelet sets these VM-wide sysctls when they differ, with no opt-out
# (pkg/kubelet/cm setupKernelTunables). In the node's mount namespace each
# differing one is shadowed by a file holding the value kubelet wants, so it
# reads its value and writes nothing.
KUBELET_SYSCTLS="vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000"

# Runs INSIDE the new mount namespace (as the child of unshare).
node_mount_setup() {
  set -euo pipefail
  # Own /run: kubelet, containerd and Cilium use their usual /run paths
  # (/run/containerd, /var/run/cilium, /run/xtables.lock) without touching
  # the host's.
  mount -t tmpfs -o mode=0755 tmpfs /run
  # sysfs of the node netns (so /sys/class/net shows the node's devices),
  # keeping the cgroup tree mounted under it.
  mkdir /run/.cg
  mount --rbind /sys/fs/cgroup /run/.cg
  mount -t sysfs sysfs /sys
  mount --move /run/.cg /sys/fs/cgroup
  rmdir /run/.cg
  # The testbed's own BPF filesystem: pins never mix with the host's. It was
  # mounted on the host at $BPFFS by setup_namespaces; move this namespace's
  # copy of that mount to the usual place (one instance, seen by the node at
  # /sys/fs/bpf only, and by the host at $BPFFS only).
  mount --move "$BPFFS" /sys/fs/bpf
  # Cilium's --cgroup-root: the testbed's cgroup2 subtree, so socket LB
  # attaches there and covers exactly the testbed's processes.
  mkdir -p /run/cilium/cgroupv2
  mount --bind "/sys/fs/cgroup/unified$CG_BASE" /run/cilium/cgroupv2
  # VM-wide sysctls read-only; net/ stays writable (it is the node netns').
  local d kv
  for d in /proc/sys/*; do
    [[ $d == /proc/sys/net || ! -d $d ]] && continue
    mount --bind "$d" "$d"
    mount -o remount,bind,ro "$d"
  done
  for kv in $KUBELET_SYSCTLS; do
    local k=${kv%%=*} v=${kv#*=}
    [[ -f /proc/sys/$k ]] || continue
    if [[ "$(cat "/proc/sys/$k")" != "$v" ]]; then
      echo "$v" >"$STATE/sysctl/${k//\//.}"
      mount --bind "$STATE/sysctl/${k//\//.}" "/proc/sys/$k"
    fi
  done
  # Usual paths of a node, backed by the testbed's state dir.
  mount --bind "$STATE/node/var-log" /var/log
  mount --bind "$STATE/kubelet" /var/lib/kubelet
  # bpftool 7.5 (tcx-aware) as the node's bpftool.
  mount --bind "$BPFTOOL_BIN/bpftool" /usr/sbin/bpftool
  # kubelet/containerd need shared propagation for volume mounts and the
  # agent's Bidirectional /sys/fs/bpf. The namespace was made private first,
  # so nothing propagates back to the host.
  mount --make-rshared /
}

setup_namespaces() {
  mkdir -p "$NSDIR" "$STATE/sysctl" "$STATE/node/var-log" "$STATE/kubelet"
  # The mnt nsfs file must live on a private mount (else it would pin itself).
  if ! mountpoint -q "$NSDIR"; then
    mount --bind "$NSDIR" "$NSDIR"
    record mount "$NSDIR"
  fi
  mount --make-private "$NSDIR"
  touch "$NETNS" "$MNTNS"
  if [[ ! -d /var/lib/kubelet ]]; then
    mkdir -p /var/lib/kubelet   # empty mountpoint on the host (removed by down)
    record dir /var/lib/kubelet
  fi
  # The testbed's bpffs is created here, in the host's mount namespace, at a
  # path of the testbed's (never the host's /sys/fs/bpf), so that the host can
  # reach it: a bpffs mounted inside the node's namespace could not be
  # bind-mounted out of it. The node's namespace gets it as /sys/fs/bpf
  # (node_mount_setup); once that is done the host's view becomes read-only
  # (nothing can be pinned or unpinned through it). `down` unmounts it.
  if [[ ! -d $BPFFS ]]; then
    mkdir -p "$BPFFS"
    record dir "$BPFFS"
  fi
  while mountpoint -q "$BPFFS"; do   # a stale one (down normally removes it)
    log "unmounting a stale bpffs at $BPFFS"
    umount "$BPFFS"
  done
  mount -t bpf labrun-testbed-bpffs "$BPFFS"
  record mount "$BPFFS"
  export CG_BASE STATE BPFTOOL_BIN KUBELET_SYSCTLS BPFFS
  unshare --net="$NETNS" --mount="$MNTNS" --propagation private \
    bash -c "$(declare -f node_mount_setup); node_mount_setup"
  mount -o remount,bind,ro "$BPFFS"
  # veth: created in the host, node end moved into the node netns.
  ip link add "$HOST_VETH" type veth peer name "$NODE_DEV" netns "$NETNS"
  record link "$HOST_VETH"
  ip addr add "$HOST_IP/$LINK_PREFIX" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  in_node ip link set lo up
  in_node ip addr add "$NODE_IP/$LINK_PREFIX" dev "$NODE_DEV"
  in_node ip link set "$NODE_DEV" up
}

# spawn NAME CMD...: start CMD as a daemon in the node's namespaces, in the
# cgroup $CG_BASE/system of every hierarchy, its own session (so it outlives
# the calling shell), output appended to $LOGDIR/NAME.log. The pidfile holds
# PID and start time (see pid_alive).
spawn() {
  local name=$1; shift
  local procs="" m
  for m in $(cgroup_mounts); do procs+="$m$CG_BASE/system/cgroup.procs "; done
  echo "==== $(date -Is) starting: $*" >>"$LOGDIR/$name.log"
  # bash -c writes its own PID into the cgroups, then execs nsenter, which
  # execs CMD: the PID stays the same all the way.
  NETNS="$NETNS" MNTNS="$MNTNS" setsid bash -c 'for f in $1; do echo $$ >"$f"; done; shift; exec nsenter --net="$NETNS" --mount="$MNTNS" -- "$@"' \
    _ "$procs" "$@" </dev/null >>"$LOGDIR/$name.log" 2>&1 &
  local pid=$!
  echo "$pid $(awk '{print $22}' "/proc/$pid/stat")" >"$PIDDIR/$name.pid"
}

# stop_pid NAME [GRACE]: SIGTERM the component by its pidfile, SIGKILL after
# GRACE seconds (default 15).
stop_pid() {
  local name=$1 grace=${2:-15} pid
  pid_alive "$name" || { rm -f "$PIDDIR/$name.pid"; return 0; }
  read -r pid _ <"$PIDDIR/$name.pid"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while pid_alive "$name" && ((SECONDS < deadline)); do sleep 0.2; done
  if pid_alive "$name"; then kill -KILL "$pid" 2>/dev/null || true; fi
  while pid_alive "$name"; do sleep 0.1; done
  rm -f "$PIDDIR/$name.pid"
}
