#!/usr/bin/env bash
# Benchmark the apply alone: `deploy-action deploy` against `kubectl apply --server-side`,
# each against a fresh `kube-sim serve` per run, alternating run by run, with GNU time.
# Prints medians (wall, CPU = user+sys, peak RSS) and the ratios kubectl / deploy-action.
# Not part of the test suite; timings on a small machine are noisy: compare the ratios of
# one run, never figures across machines.
#
#   scripts/bench-apply.sh [--runs 3] [--size 2000] [--variants configmaps,mixed]
#                          [--baseline BIN] [--sim BIN] [--no-build]
#
# --baseline BIN also times another deploy-action binary (an earlier build), alternating
# with the others, as tool `baseline`; --sim BIN serves with another kube-sim.
#
# Variants (SIZE objects each, in one directory of files of 100 objects):
#   configmaps  SIZE ConfigMaps in namespace default (judged as soon as they exist, so a
#               deploy is its apply plus one list)
#   mixed       a Namespace created by the same manifests, and in it Deployments scaled
#               to zero, a Service selecting each, and ConfigMaps (a quarter, a quarter,
#               the rest): all judged at once, but only the Namespace can be dry-run
#               before the apply, the rest are applied after it
#
# deploy-action runs `deploy --settle 0 --image-preflight off --timeout 120s`: the
# verdicts are immediate, so what is timed is discovery, the dry run, the apply and one
# list per kind. kubectl runs `apply --server-side -f DIR` (no dry run, no verdicts).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
size=2000
variants=configmaps,mixed
build=1
baseline=""
sim_bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --variants) variants="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --sim) sim_bin="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

for tool in kubectl curl jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench-apply.sh needs $tool" >&2; exit 2; }
done

if [ "$build" = 1 ]; then
  cargo build --quiet --release -p deploy-action -p kube-sim --bins
fi
bin="$(pwd)/${CARGO_TARGET_DIR:-target}/release"
case "${CARGO_TARGET_DIR:-}" in /*) bin="$CARGO_TARGET_DIR/release" ;; esac
sim_bin="${sim_bin:-$bin/kube-sim}"
tools=(deploy-action kubectl)
[ -z "$baseline" ] || tools=(baseline deploy-action kubectl)

work="$(mktemp -d)"
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
trap 'stop_sim; rm -rf "$work"' EXIT
rows="$work/rows.tsv"
: >"$rows"

cat >"$work/scenario.yaml" <<EOF
kubernetes_version: "1.33"
nodes: 3
EOF

# configmap NAME NS, deployment NAME NS, service NAME NS: one object each.
configmap() {
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: {app: bench}}\ndata: {mode: fast, level: "3", greeting: hello from %s}\n' "$1" "$2" "$1"
}

# manifests VARIANT DIR: SIZE objects, 100 to a file.
manifests() {
  local variant="$1" dir="$2" i
  mkdir -p "$dir"
  {
    case "$variant" in
      configmaps)
        for ((i = 0; i < size; i++)); do configmap "$(printf 'cm-%05d' "$i")" default; done ;;
      mixed)
        printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: bench}\n'
        local apps=$((size / 4))
        for ((i = 0; i < apps; i++)); do
          bench_app "$(printf 'app-%05d' "$i")" bench 0 registry.local/bench/app:1
        done
        for ((i = 2 * apps + 1; i < size; i++)); do configmap "$(printf 'cm-%05d' "$i")" bench; done ;;
      *) echo "unknown variant: $variant" >&2; exit 2 ;;
    esac
  } | awk -v dir="$dir" '/^---$/ { n++ } { printf "%s\n", $0 > sprintf("%s/part-%03d.yaml", dir, int((n - 1) / 100)) }'
}

# one_run TOOL VARIANT RUN: start kube-sim, run the tool, append a row to $rows.
one_run() {
  local tool="$1" variant="$2" run="$3" dir="$work/m-$2" code=0
  start_sim "$sim_bin" "$work/scenario.yaml"
  case "$tool" in
    deploy-action | baseline)
      local exe="$bin/deploy-action"
      [ "$tool" = deploy-action ] || exe="$baseline"
      /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$exe" deploy -f "$dir" \
        --kubeconfig "$kc" --timeout 120s --settle 0 --image-preflight off \
        >"$work/tool.log" 2>&1 || code=$? ;;
    kubectl)
      /usr/bin/time -f '%e %U %S %M' -o "$work/time" env KUBECONFIG="$kc" \
        kubectl apply --server-side -f "$dir" >"$work/tool.log" 2>&1 || code=$? ;;
  esac
  local requests
  requests="$(curl -sf "$server/debug/requests" | jq -r '
    [.requests[] | {verb, count}] | group_by(.verb)
    | map("\(.[0].verb)=\(map(.count) | add)") | join(",")')"
  stop_sim
  if [ "$code" != 0 ]; then
    echo "$tool $variant run $run exited $code:" >&2
    tail -5 "$work/tool.log" >&2
  fi
  local wall user sys rss
  read -r wall user sys rss < <(tail -1 "$work/time")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$variant" "$run" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" "$((rss / 1024))" \
    "$code" "$requests" >>"$rows"
  printf '  %-13s %-10s run %s: %6ss wall, %ss user, %ss sys, %s KiB, exit %s\n' \
    "$tool" "$variant" "$run" "$wall" "$user" "$sys" "$rss" "$code" >&2
}

IFS=, read -r -a variant_list <<<"$variants"
for variant in "${variant_list[@]}"; do
  manifests "$variant" "$work/m-$variant"
  for ((r = 1; r <= runs; r++)); do
    # Alternating, so drift in the machine's load falls on both alike.
    for tool in "${tools[@]}"; do one_run "$tool" "$variant" "$r"; done
  done
done

col() { awk -F'\t' -v t="$1" -v v="$2" -v c="$3" '$1 == t && $2 == v { print $c }' "$rows"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.1fx", a / b }'; }

echo
echo "| objects | variant | tool | wall s | CPU s | peak RSS MiB | requests (last run) | exit codes | kubectl / d-a wall | CPU | RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for variant in "${variant_list[@]}"; do
  dw="$(col deploy-action "$variant" 4 | median)"
  dc="$(col deploy-action "$variant" 5 | median)"
  dr="$(col deploy-action "$variant" 6 | median)"
  for tool in "${tools[@]}"; do
    wall="$(col "$tool" "$variant" 4 | median)"
    cpu="$(col "$tool" "$variant" 5 | median)"
    rss="$(col "$tool" "$variant" 6 | median)"
    codes="$(col "$tool" "$variant" 7 | sort -u | paste -sd/ -)"
    reqs="$(col "$tool" "$variant" 8 | tail -1)"
    echo "| $size | $variant | $tool | $wall | $cpu | $rss | ${reqs//,/ } | $codes | $(ratio "$wall" "$dw") | $(ratio "$cpu" "$dc") | $(ratio "$rss" "$dr") |"
  done
done
echo
echo "bench-apply.sh: $runs run(s) each, $size objects"
