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
