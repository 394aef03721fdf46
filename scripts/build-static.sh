#!/usr/bin/env bash
# Builds deploy-action as one statically linked executable and proves it: the Action ships a
# single file that must run on any runner image, so a stray dynamic dependency (a system
# OpenSSL, a newer glibc) has to fail here rather than on a user's runner.
#
# Usage: scripts/build-static.sh            (target x86_64-unknown-linux-gnu, glibc crt-static)
#        TARGET=x86_64-unknown-linux-musl scripts/build-static.sh   (where that target is installed)
#        PGO=1 TARGET=... scripts/build-static.sh   optimized with a profile of training deploys
#                                                  (scripts/pgo-profile.sh), as x86_64 Linux ships
# The release workflow builds musl targets instead; glibc crt-static is what this machine can
# build with the toolchain it has, and it exercises the same question: does anything in the
# dependency tree insist on a shared library?
set -euo pipefail
cd "$(dirname "$0")/.."

target="${TARGET:-x86_64-unknown-linux-gnu}"
# Outside the clone so a rebuild on a reused machine is incremental, as .ci/run does.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/static-target}"
export CARGO_TERM_COLOR=never
# crt-static makes rustc link the C runtime statically too; without it a gnu target binary
# always needs ld-linux and libc.so at run time.
export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
# The allocator, mimalloc, commits memory lazily, as in the release workflow (see the
# comment there). .cargo/config.toml sets the same define, but only when CFLAGS is unset;
# here it is added to whatever CFLAGS the caller has.
export CFLAGS="${CFLAGS:-} -DMI_DEFAULT_ARENA_EAGER_COMMIT=0"

if [ "${PGO:-0}" = 1 ]; then
  profile="$CARGO_TARGET_DIR/pgo/$target.profdata"
  mkdir -p "$(dirname "$profile")"
  TARGET="$target" scripts/pgo-profile.sh "$profile"
  export RUSTFLAGS="$RUSTFLAGS -Cprofile-use=$profile"
fi

# The profile the release workflow ships (Cargo.toml: thin LTO, one codegen unit).
cargo build --profile dist --locked --target "$target" -p deploy-action --bin deploy-action
bin="$CARGO_TARGET_DIR/$target/dist/deploy-action"

# ldd exits non-zero on a static executable, so its verdict is read from its words.
ldd_out="$(ldd "$bin" 2>&1 || true)"
echo "ldd: $ldd_out"
case "$ldd_out" in
  *"not a dynamic executable"* | *"statically linked"*) ;;
  *)
    echo "error: $bin is dynamically linked" >&2
    exit 1
    ;;
esac
if command -v file >/dev/null 2>&1; then
  file "$bin"
fi
echo "size: $(stat -c %s "$bin") bytes"

"$bin" --version
# No cluster and no registry: `check` validates the examples offline, which proves the
# binary starts, parses arguments and reads manifests without a loader or a libc to lean on.
"$bin" check -f examples/manifests --image-preflight off
