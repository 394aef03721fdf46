#!/usr/bin/env bash
# Build deploy-action and kube-sim, start a simulated cluster, and deploy the examples:
# one success (web), one hard failure (api), one timeout blamed on the registry (worker).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p deploy-action -p kube-sim --bins
bin="${CARGO_TARGET_DIR:-target}/debug"
work="$(mktemp -d)"
trap 'kill "$sim" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin/kube-sim" serve --scenario examples/scenario.yaml --kubeconfig "$work/kubeconfig" >"$work/sim.log" 2>&1 &
sim=$!
for _ in $(seq 50); do [ -s "$work/kubeconfig" ] && break; sleep 0.1; done
status=0
"$bin/deploy-action" deploy -f examples/manifests --no-fail-fast --kubeconfig "$work/kubeconfig" \
  --report "$work/report.json" "$@" || status=$?
echo "deploy-action exited with $status (0 success, 1 failure, 70 timed out, 2 invalid input)"
exit 0
