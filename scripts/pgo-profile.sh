#!/usr/bin/env bash
# Makes the profile the shipped binary is optimized with (profile-guided optimization): an
# instrumented build of deploy-action deploys to kube-sim as users' deploys go (a healthy
# rollout, an image never pushed, a rollout that times out, an offline `check`), and
# llvm-profdata merges what it counted. Built with `-Cprofile-use`, the binary has its hot
# code together and its branches laid out as they are taken: at 2,500 Deployments peak RSS
# 67-69 -> 60-62 MiB and CPU 5.7-6.4 -> 4.9-5.1 s (docs/benchmark.md).
#
# Usage: scripts/pgo-profile.sh OUT.profdata
#   env TARGET  the target the profile is for (default: this machine's); the instrumented
#               binary runs here, so it must be a target this machine can run.
#       BUILD   the build command of the instrumented binary (default `cargo build`; not
#               `cargo zigbuild`, whose linker driver takes rustc's `-u __llvm_profile_runtime`
#               for a file: the release workflow builds it with musl-gcc).
# Needs rustup's llvm-tools component (llvm-profdata of rustc's own LLVM version).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:?usage: scripts/pgo-profile.sh OUT.profdata}"
host="$(rustc -vV | sed -n 's/^host: //p')"
target="${TARGET:-$host}"
read -r -a build <<<"${BUILD:-cargo build}"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  echo "error: no $profdata; install it with: rustup component add llvm-tools" >&2
  exit 1
fi
export CARGO_TERM_COLOR=never
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac

work="$(mktemp -d)"
raw="$work/raw"
mkdir -p "$raw"
# shellcheck disable=SC2034 # read by bench-common.sh: one node per 100 pods, 4 pods each
nodes=auto replicas=4
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
trap 'stop_sim; rm -rf "$work"' EXIT

# The simulated cluster the training deploys to, built for this machine as the tests build
# it (without the caller's flags, which are for deploy-action's target).
env -u RUSTFLAGS -u CFLAGS cargo build --release --locked -p kube-sim --bin kube-sim
kube_sim="$target_dir/release/kube-sim"

# The instrumented build, in a directory of its own: its objects differ from the final
# build's (and from every other build's) and would evict them from a shared one.
CARGO_TARGET_DIR="$target_dir/pgo-generate" RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" \
  "${build[@]}" --profile dist --locked --target "$target" -p deploy-action --bin deploy-action
bin="$target_dir/pgo-generate/$target/dist/deploy-action"
# One file per process: %p is the process id, %m the binary's signature.
export LLVM_PROFILE_FILE="$raw/deploy-action-%p-%m.profraw"

# SIZE VARIANT TIMEOUT EXIT: deploy SIZE Deployments of the bench's VARIANT and insist on
# the exit code such a deploy has, so a broken run never trains the build.
train() {
  local size="$1" variant="$2" timeout="$3" want="$4" code=0
  rm -rf "$work/m"
  manifests "$size" "$variant" "$work/m"
  scenario "$size" "$work/scenario.yaml"
  start_sim "$kube_sim" "$work/scenario.yaml"
  # shellcheck disable=SC2154 # $kc is set by start_sim
  "$bin" deploy -f "$work/m" --kubeconfig "$kc" --timeout "$timeout" --settle 0 \
    --image-preflight off >"$work/out.log" 2>"$work/err.log" || code=$?
  stop_sim
  if [ "$code" != "$want" ]; then
    echo "error: training deploy ($size $variant) exited $code, not $want:" >&2
    tail -20 "$work/err.log" >&2
    exit 1
  fi
  echo "trained: $size Deployments, $variant, exit $code"
}
train 400 healthy 300s 0
train 60 missing 120s 1
train 20 stuck 10s 70
if ! "$bin" check -f examples/manifests --image-preflight off >"$work/out.log" 2>"$work/err.log"; then
  echo "error: training check of examples/manifests failed:" >&2
  cat "$work/err.log" >&2
  exit 1
fi
echo "trained: check -f examples/manifests"

"$profdata" merge -o "$out" "$raw"/*.profraw
echo "profile: $out ($(stat -c %s "$out") bytes from $(find "$raw" -name '*.profraw' | wc -l) runs)"
