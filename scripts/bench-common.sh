# shellcheck shell=bash
# Shared by scripts/bench.sh, bench-apply.sh and sim-scale.sh (sourced, not run): the
# benchmark's workload and the kube-sim each run starts, so the three measure the same
# things. Uses the caller's $work directory.

# bench_app NAME NAMESPACE REPLICAS IMAGE: a Deployment and the Service that selects its
# pods, as YAML documents.
bench_app() {
  cat <<EOF
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: $2}
spec:
  replicas: $3
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec: {containers: [{name: app, image: "$4", ports: [{containerPort: 8080}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: $1, namespace: $2}
spec:
  selector: {app: $1}
  ports: [{port: 80, targetPort: 8080}]
EOF
}

# scenario SIZE FILE: the simulated cluster for SIZE Deployments ($nodes nodes, or with
# `auto` one per 100 pods of $replicas each, at least 25).
# shellcheck disable=SC2154 # $nodes and $replicas are the sourcing script's
scenario() {
  local size="$1" n="$nodes"
  if [ "$n" = auto ]; then
    n=$(((size * replicas + 99) / 100))
    [ "$n" -ge 25 ] || n=25
  fi
  cat >"$2" <<EOF
kubernetes_version: "1.33"
nodes: $n
images:
  default: {pull: 10ms}
  "registry.local/bench/missing:*": not_found
  "registry.local/bench/stuck:*": {pull: 1h}
EOF
}

# manifests SIZE VARIANT DIR: SIZE Deployments with a Service each, in namespace default;
# the missing variant gives the first Deployment an image the registry does not have.
# shellcheck disable=SC2154 # $replicas is the sourcing script's
manifests() {
  local size="$1" variant="$2" dir="$3" i name image
  mkdir -p "$dir"
  for ((i = 0; i < size; i++)); do
    name="$(printf 'app-%04d' "$i")"
    image="registry.local/bench/app:1"
    if [ "$variant" = missing ] && [ "$i" -eq 0 ]; then
      image="registry.local/bench/missing:1"
    elif [ "$variant" = stuck ]; then
      image="registry.local/bench/stuck:1"
    fi
    bench_app "$name" default "$replicas" "$image" >"$dir/$name.yaml"
  done
}

# now_ms: the time in milliseconds.
now_ms() { date +%s%3N; }

# median: the median of the numbers on stdin, one per line; "-" for none, or when a run
# had no figure ("-" sorts first).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (v[1] == "-") print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

sim=""
# start_sim BIN SCENARIO: `kube-sim serve` in the background, its kubeconfig in $kc and its
# address in $server once it listens.
# shellcheck disable=SC2154 # $work is the sourcing script's
start_sim() {
  kc="$work/kubeconfig"
  rm -f "$kc"
  "$1" serve --scenario "$2" --kubeconfig "$kc" >"$work/sim.log" 2>&1 &
  sim=$!
  for _ in $(seq 200); do [ -s "$kc" ] && break; sleep 0.05; done
  [ -s "$kc" ] || { echo "kube-sim did not start: $(cat "$work/sim.log")" >&2; exit 1; }
  # shellcheck disable=SC2034 # read by the sourcing script
  server="$(sed -n 's/^ *server: *//p' "$kc" | head -1)"
}

stop_sim() {
  if [ -n "$sim" ]; then
    kill "$sim" 2>/dev/null || true
    wait "$sim" 2>/dev/null || true
    sim=""
  fi
}
