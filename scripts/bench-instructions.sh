#!/usr/bin/env bash
# Counts the instructions deploy-action executes for one deploy of scripts/bench.sh's
# workload, under valgrind's cachegrind, for one or more builds side by side. Timed runs
# on a shared 2-core machine spread 10-30%, so a change worth a few percent cannot be
# told from noise; counts of one build agreed within about 3% in most blocks (14% in
# one, docs/benchmark.md), so count each build more than once. Under valgrind the
# tool runs at a fraction of its speed while kube-sim does not, so watch events arrive in
# larger batches than in a timed run: the counts compare builds, they are not CPU time.
# Not part of the test suite.
#
#   scripts/bench-instructions.sh [--runs 2] [--size 500] [--variant healthy]
#                                 [--sim PATH/kube-sim] BIN [BIN...]
#
# Builds alternate run by run (run 1 of each, then run 2 of each), each against a fresh
# kube-sim. Prints one line per run, then the medians in millions of instructions.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=2
size=500
variant=healthy
sim_bin=""
nodes=auto
replicas=4
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --variant) variant="$2"; shift 2 ;;
    --sim) sim_bin="$2"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "unknown argument: $1" >&2; exit 2 ;;
    *) bins+=("$1"); shift ;;
  esac
done
[ "${#bins[@]}" -gt 0 ] || { echo "bench-instructions.sh: name at least one deploy-action binary" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench-instructions.sh needs valgrind (apt-get install valgrind)" >&2; exit 2; }
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "bench-instructions.sh: $b is not an executable" >&2; exit 2; }
done
if [ -z "$sim_bin" ]; then
  sim_bin="${CARGO_TARGET_DIR:-target}/release/kube-sim"
  [ -x "$sim_bin" ] || cargo build --quiet --release -p kube-sim
fi

work="$(mktemp -d)"
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
trap 'stop_sim; rm -rf "$work"' EXIT
manifests "$size" "$variant" "$work/m"
scenario "$size" "$work/scenario.yaml"

# count BIN: the instructions of one deploy (millions), and its exit code.
count() {
  local status=0
  start_sim "$sim_bin" "$work/scenario.yaml"
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$1" deploy -f "$work/m" --kubeconfig "$kc" --timeout 600s --settle 0 \
    --image-preflight off >"$work/out.log" 2>"$work/valgrind.log" || status=$?
  stop_sim
  local refs
  refs="$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$work/valgrind.log" | tr -d ,)"
  [ -n "$refs" ] || { echo "no count from valgrind: $(tail -5 "$work/valgrind.log")" >&2; exit 1; }
  echo "$((refs / 1000000)) $status"
}

rows="$work/rows"
: >"$rows"
for ((run = 1; run <= runs; run++)); do
  for i in "${!bins[@]}"; do
    read -r millions status < <(count "${bins[$i]}")
    printf '%s\trun %d:\t%s million instructions\texit %s\n' "${bins[$i]}" "$run" "$millions" "$status"
    printf '%d\t%s\n' "$i" "$millions" >>"$rows"
  done
done
echo
echo "| build | $size $variant, millions of instructions (median of $runs) | against the first |"
echo "|---|---|---|"
first=""
for i in "${!bins[@]}"; do
  m="$(awk -v i="$i" '$1 == i { print $2 }' "$rows" | median)"
  [ -n "$first" ] || first="$m"
  printf '| %s | %s | %s |\n' "${bins[$i]}" "$m" "$(awk -v a="$m" -v b="$first" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')"
done
