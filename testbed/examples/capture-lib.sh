# shellcheck shell=bash
# What capture.sh and capture-twonode.sh share (sourced): writing one capture
# file, and the first line a tool prints (its version). Needs OUT (the output
# directory) and CILIUM_V (the agent's version).

# cap FILE TOOLVERSION DISPLAY_CMD -- CMD...: run CMD, write header + output.
cap() {
  local file=$1 tool=$2 shown=$3; shift 4
  local rc=0 outf errf
  outf="$(mktemp)"; errf="$(mktemp)"
  "$@" >"$outf" 2>"$errf" || rc=$?
  local hdr
  hdr="$(printf '# command: %s\n# cilium: v%s\n# tool: %s\n# exit: %s' "$shown" "$CILIUM_V" "$tool" "$rc")"
  { echo "$hdr"; cat "$outf"; } >"$OUT/$file"
  # stderr, if any, goes next to it (same header), so stdout stays byte-exact.
  rm -f "$OUT/$file.stderr"
  if [[ -s $errf ]]; then { echo "$hdr"; cat "$errf"; } >"$OUT/$file.stderr"; fi
  rm -f "$outf" "$errf"
  log "captured $file (exit $rc)"
}

# first_line CMD...: the first line of what CMD prints (its version line).
# The whole output is read first: with pipefail, head -n1 exiting early
# would fail the writer with SIGPIPE.
first_line() { local o; o="$("$@" 2>&1 || true)"; printf '%s\n' "${o%%$'\n'*}"; }
