#!/usr/bin/env bash
# kube-sim's own scale check: how long the simulator takes to bring N Deployments (4
# replicas each, each with a Service; the shape of scripts/bench.sh) Running, Ready and
# rolled out, so that a benchmark of a client measures the client and not the simulator.
# Also times server-side apply of M ConfigMaps (plain and dryRun=All) with kubectl, and
# the server's per-request latency as kubectl -v=6 reports it (whole milliseconds) and
# kube-sim's CPU time per object applied. Not part of the test
# suite; prints one line per run and medians.
#
#   scripts/sim-scale.sh [--sizes 500,2500] [--runs 3] [--nodes 100] [--replicas 4]
#                        [--configmaps 2000] [--bin PATH/kube-sim] [--timeout 600]
#
# "apply" is kubectl apply --server-side of every manifest; "rolled out" is from the start
# of that apply to kube-sim's /debug/milestones all_rolled_out_at_ms.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=500,2500
runs=3
nodes=100
replicas=4
configmaps=2000
timeout=600
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --replicas) replicas="$2"; shift 2 ;;
    --configmaps) configmaps="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
for tool in kubectl curl jq; do
  command -v "$tool" >/dev/null || { echo "sim-scale.sh needs $tool" >&2; exit 2; }
done
if [ -z "$bin" ]; then
  cargo build --quiet --release -p kube-sim --bin kube-sim
  bin="${CARGO_TARGET_DIR:-$(pwd)/target}/release/kube-sim"
fi

work="$(mktemp -d)"
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
trap 'stop_sim; rm -rf "$work"' EXIT

cat >"$work/scenario.yaml" <<EOF
kubernetes_version: "1.33"
nodes: $nodes
images:
  default: {pull: 10ms}
EOF

configmaps() {
  local size="$1" dir="$2" i name
  mkdir -p "$dir"
  for ((i = 0; i < size; i++)); do
    name="$(printf 'cm-%04d' "$i")"
    cat >"$dir/$name.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: $name, namespace: default, labels: {app: bench}}
data: {key: "value-$i", other: "something a little longer, as a config file would be"}
EOF
  done
}

# sim_up: kube-sim of this scale check, with kubectl pointed at it.
sim_up() {
  start_sim "$bin" "$work/scenario.yaml"
  export KUBECONFIG="$kc"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$sim/stat"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1000 }'; }
results="$work/results.tsv"
: >"$results"

IFS=, read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
  dir="$work/deploy-$size"
  manifests "$size" healthy "$dir"
  for ((r = 1; r <= runs; r++)); do
    sim_up
    start="$(now_ms)"
    kubectl apply --server-side -f "$dir" >/dev/null
    applied="$(now_ms)"
    done_at=""
    while [ -z "$done_at" ]; do
      done_at="$(curl -sf "$server/debug/milestones" | jq -r '.all_rolled_out_at_ms // empty')"
      [ -n "$done_at" ] && break
      [ $(($(now_ms) - start)) -lt $((timeout * 1000)) ] || { done_at=timeout; break; }
      sleep 0.2
    done
    cpu="$(awk '{ printf "%.1f", ($14 + $15) / 100 }' "/proc/$sim/stat")"
    rss="$(awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$sim/status")"
    stop_sim
    if [ "$done_at" = timeout ]; then rolled=timeout; else rolled="$(secs "$start" "$done_at")"; fi
    printf 'deploy\t%s\t%s\t%s\t%s\t%s\n' "$size" "$(secs "$start" "$applied")" "$rolled" "$cpu" "$rss" >>"$results"
    printf '%5s Deployments run %s: apply %6ss, rolled out %7ss, kube-sim CPU %6ss, peak RSS %s MiB\n' \
      "$size" "$r" "$(secs "$start" "$applied")" "$rolled" "$cpu" "$rss" >&2
  done
done

if [ "$configmaps" -gt 0 ]; then
  dir="$work/cm"
  configmaps "$configmaps" "$dir"
  for ((r = 1; r <= runs; r++)); do
    sim_up
    for mode in dry-run apply reapply; do
      flags=(--server-side)
      [ "$mode" = dry-run ] && flags+=(--dry-run=server)
      start="$(now_ms)"
      cpu0="$(cpu_ticks)"
      kubectl apply "${flags[@]}" -f "$dir" -v=6 2>"$work/v6.log" >/dev/null
      cpu1="$(cpu_ticks)"
      end="$(now_ms)"
      # kubectl -v=6 logs each response as verb="PATCH" ... milliseconds=N.
      server_ms="$(grep 'verb="PATCH"' "$work/v6.log" | sed -n 's/.*milliseconds=\([0-9]*\).*/\1/p' |
        awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n; else print "-" }')"
      cpu_ms="$(awk -v a="$cpu0" -v b="$cpu1" -v n="$configmaps" 'BEGIN { printf "%.2f", (b - a) * 10 / n }')"
      printf 'cm-%s\t%s\t%s\t%s\t%s\n' "$mode" "$configmaps" "$(secs "$start" "$end")" "$server_ms" "$cpu_ms" >>"$results"
      printf '%5s ConfigMaps %-8s run %s: kubectl %6ss, mean PATCH latency seen by kubectl %s ms, kube-sim CPU %s ms per object\n' \
        "$configmaps" "$mode" "$r" "$(secs "$start" "$end")" "$server_ms" "$cpu_ms" >&2
    done
    stop_sim
  done
fi

echo
echo "| what | count | apply s | rolled out s | kube-sim CPU s | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
for size in "${size_list[@]}"; do
  col() { awk -F'\t' -v s="$size" -v c="$1" '$1 == "deploy" && $2 == s { print $c }' "$results" | median; }
  echo "| Deployments ($((size * replicas)) pods, $nodes nodes) | $size | $(col 3) | $(col 4) | $(col 5) | $(col 6) |"
done
if [ "$configmaps" -gt 0 ]; then
  echo
  echo "| ConfigMaps, kubectl apply --server-side | count | kubectl s | mean PATCH ms (kubectl -v=6) | kube-sim CPU ms per object |"
  echo "|---|---|---|---|---|"
  for mode in dry-run apply reapply; do
    col() { awk -F'\t' -v m="cm-$mode" -v c="$1" '$1 == m { print $c }' "$results" | median; }
    echo "| $mode | $configmaps | $(col 3) | $(col 4) | $(col 5) |"
  done
fi
echo "(medians of $runs run(s))"
