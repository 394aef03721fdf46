#!/usr/bin/env bash
# Benchmark deploy-action against the tools people use instead, each against a fresh
# `kube-sim serve` per run: same manifests, same scenario (25 nodes, 10 ms image pulls),
# same timeout. Prints one table row per tool, workload and variant (medians of --runs),
# with ratios to deploy-action. Not part of the test suite; results: docs/benchmark.md.
#
#   scripts/bench.sh [--runs 3] [--sizes 1,50] [--variants healthy,missing]
#                    [--tools deploy-action,rollout,wait,kpt,poller] [--timeout 120]
#                    [--nodes auto] [--replicas 4] [--raw FILE] [--baseline BIN]
#                    [--no-build]
#
# Sizes are Deployments (each with --replicas pods and a Service): 500 is 2,000 pods, 2500
# is 10,000. --nodes auto gives 25 nodes, or one per 100 pods beyond that (100 at 2500).
# Variants: healthy (every image pulls in 10 ms), missing (the first Deployment's image is
# not in the registry), stuck (every pull takes an hour: the run waits out --timeout with
# nothing changing, so its CPU is the idle cost of that long a wait).
#
# Runs alternate tool by tool (run 1 of each, then run 2 of each...), so a machine whose
# speed drifts during the bench drifts under every tool alike. --baseline BIN also times
# another deploy-action binary (an earlier build, or the static one a release ships) as
# tool `baseline`, run just before deploy-action, with the same arguments.
#
# Tools:
#   deploy-action  release build, `deploy --settle 0 --image-preflight off` (no settle and no
#                  registry lookups, so it waits for what the others wait for)
#   rollout        kubectl apply --server-side, then kubectl rollout status per Deployment,
#                  one after another (as a CI script loops over them)
#   wait           kubectl apply --server-side, then kubectl wait --for=condition=Available
#                  deployment --all
#   kpt            kpt live init + kpt live apply (waits for reconcile by default)
#   poller         krane-style: kubectl apply --server-side, then every 3 s one kubectl get
#                  of deployments, replicasets and pods until all Deployments are rolled
#                  out (success) or a pod reports ErrImagePull/ImagePullBackOff (failure)
#
# "after" is the time from the decisive event to the tool's exit: the moment the last
# Deployment finished rolling out (healthy) or a pod first reported an image pull error
# (missing), as kube-sim's GET /debug/milestones saw it. CPU is user+sys of the tool and
# every process it started; RSS is the largest single process's peak (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
sizes=1,50
variants=healthy,missing
tools=deploy-action,rollout,wait,kpt,poller
timeout=120
nodes=auto
replicas=4
raw=""
build=1
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --variants) variants="$2"; shift 2 ;;
    --tools) tools="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --replicas) replicas="$2"; shift 2 ;;
    --raw) raw="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

for tool in kubectl kpt curl jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench.sh needs $tool" >&2; exit 2; }
done

if [ "$build" = 1 ]; then
  cargo build --quiet --release -p deploy-action -p kube-sim --bins
fi
bin="$(pwd)/${CARGO_TARGET_DIR:-target}/release"
case "${CARGO_TARGET_DIR:-}" in /*) bin="$CARGO_TARGET_DIR/release" ;; esac
if [ -n "$baseline" ]; then
  [ -x "$baseline" ] || { echo "bench.sh: --baseline $baseline is not an executable" >&2; exit 2; }
  tools="baseline,$tools"
fi

work="$(mktemp -d)"
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
trap 'stop_sim; rm -rf "$work"' EXIT
rows="${raw:-$work/rows.tsv}"
: >"$rows"


# The krane-style poller, run as its own script so its CPU and RSS are measured like a tool.
cat >"$work/poller.sh" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
dir="$1" timeout="$2"
kubectl apply --server-side -f "$dir" >/dev/null
deadline=$(($(date +%s) + timeout))
while :; do
  verdict="$(kubectl get deployments,replicasets,pods -n default -o json | jq -r '
    [.items[] | select(.kind == "Deployment")] as $d
    | [.items[] | select(.kind == "Pod") | .status.containerStatuses[]?
       | select(.state.waiting.reason == "ErrImagePull" or .state.waiting.reason == "ImagePullBackOff")] as $bad
    | if ($bad | length) > 0 then "failed"
      elif all($d[]; (.status.observedGeneration // 0) >= .metadata.generation
               and (.status.updatedReplicas // 0) == .spec.replicas
               and (.status.availableReplicas // 0) == .spec.replicas
               and (.status.replicas // 0) == .spec.replicas) then "succeeded"
      else "waiting" end')"
  case "$verdict" in
    succeeded) exit 0 ;;
    failed) exit 1 ;;
  esac
  [ "$(date +%s)" -lt "$deadline" ] || exit 70
  sleep 3
done
EOF
chmod +x "$work/poller.sh"

# run_tool TOOL DIR KUBECONFIG: the tool's command, run under the caller's GNU time.
run_tool() {
  local tool="$1" dir="$2" kc="$3"
  export KUBECONFIG="$kc"
  case "$tool" in
    deploy-action | baseline)
      local exe="$bin/deploy-action"
      [ "$tool" = deploy-action ] || exe="$baseline"
      "$exe" deploy -f "$dir" --kubeconfig "$kc" --timeout "${timeout}s" \
        --settle 0 --image-preflight off ;;
    rollout)
      kubectl apply --server-side -f "$dir" >/dev/null || return
      local status=0 f
      for f in "$dir"/*.yaml; do
        kubectl rollout status "deployment/$(basename "$f" .yaml)" -n default \
          --timeout="${timeout}s" >/dev/null || status=$?
      done
      return "$status" ;;
    wait)
      kubectl apply --server-side -f "$dir" >/dev/null || return
      kubectl wait --for=condition=Available deployment --all -n default \
        --timeout="${timeout}s" >/dev/null ;;
    kpt)
      kpt live init "$dir" >/dev/null || return
      kpt live apply "$dir" --reconcile-timeout="${timeout}s" ;;
    poller)
      "$work/poller.sh" "$dir" "$timeout" ;;
  esac
}

# one_run TOOL SIZE VARIANT RUN: start kube-sim, run the tool, append a row to $rows.
one_run() {
  local tool="$1" size="$2" variant="$3" run="$4"
  local dir="$work/m-$tool-$size-$variant-$run"
  rm -rf "$dir"
  manifests "$size" "$variant" "$dir"
  scenario "$size" "$work/scenario.yaml"
  start_sim "$bin/kube-sim" "$work/scenario.yaml"
  local start end code=0
  start="$(now_ms)"
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
    bash -c "$(declare -f run_tool); bin='$bin' baseline='$baseline' work='$work' timeout='$timeout' \
      run_tool '$tool' '$dir' '$kc'" >"$work/tool.log" 2>&1 || code=$?
  end="$(now_ms)"
  local milestones requests decisive after
  milestones="$(curl -sf "$server/debug/milestones")"
  requests="$(curl -sf "$server/debug/requests" | jq -r '
    [.requests[] | {verb, count}] | group_by(.verb)
    | map("\(.[0].verb)=\(map(.count) | add)") | join(",")')"
  stop_sim
  if [ "$variant" = missing ]; then
    decisive="$(jq -r '.first_image_pull_error_at_ms // empty' <<<"$milestones")"
  else
    decisive="$(jq -r '.all_rolled_out_at_ms // empty' <<<"$milestones")"
  fi
  if [ -n "$decisive" ]; then
    after="$(awk -v e="$end" -v d="$decisive" 'BEGIN { printf "%.2f", (e - d) / 1000 }')"
  else
    after="-"
  fi
  local wall user sys rss
  read -r wall user sys rss < <(tail -1 "$work/time")
  wall="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", (e - s) / 1000 }')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$size" "$variant" "$run" \
    "$wall" "$after" "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" \
    "$((rss / 1024))" "$code" "$requests" >>"$rows"
  printf '  %-13s %4s %-7s run %s: %6ss wall, %6ss after, exit %s\n' \
    "$tool" "$size" "$variant" "$run" "$wall" "$after" "$code" >&2
}

IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a variant_list <<<"$variants"
IFS=, read -r -a tool_list <<<"$tools"
began="$(date +%s)"
for size in "${size_list[@]}"; do
  for variant in "${variant_list[@]}"; do
    for ((r = 1; r <= runs; r++)); do
      for tool in "${tool_list[@]}"; do
        one_run "$tool" "$size" "$variant" "$r"
      done
    done
  done
done

# Medians per (tool, size, variant); ratios to deploy-action's medians.
col() { awk -F'\t' -v t="$1" -v s="$2" -v v="$3" -v c="$4" '$1 == t && $2 == s && $3 == v { print $c }' "$rows"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.1fx", a / b }'; }

echo
echo "| Deployments | variant | tool | wall s | after event s | CPU s | peak RSS MiB | requests (median run) | exit codes | wall / d-a | CPU / d-a |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in "${size_list[@]}"; do
  for variant in "${variant_list[@]}"; do
    base_wall="$(col deploy-action "$size" "$variant" 5 | median)"
    base_cpu="$(col deploy-action "$size" "$variant" 7 | median)"
    for tool in "${tool_list[@]}"; do
      wall="$(col "$tool" "$size" "$variant" 5 | median)"
      after="$(col "$tool" "$size" "$variant" 6 | median)"
      cpu="$(col "$tool" "$size" "$variant" 7 | median)"
      rss="$(col "$tool" "$size" "$variant" 8 | median)"
      codes="$(col "$tool" "$size" "$variant" 9 | sort -u | paste -sd/ -)"
      mid="$(awk -F'\t' -v t="$tool" -v s="$size" -v v="$variant" '$1 == t && $2 == s && $3 == v { print $5 "\t" $10 }' "$rows" | sort -g | awk -F'\t' '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }')"
      echo "| $size | $variant | $tool | $wall | $after | $cpu | $rss | ${mid//,/ } | $codes | $(ratio "$wall" "$base_wall") | $(ratio "$cpu" "$base_cpu") |"
    done
  done
done
echo
echo "bench.sh: $runs run(s) each, sizes $sizes, finished in $(($(date +%s) - began)) s"
