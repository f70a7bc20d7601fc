#!/usr/bin/env bash
# AddressSanitizer over the crates whose unsafe code faces untrusted input: the data and
# FlatBuffers SDKs (verification of hostile bytes), the plugin SDK (every C entry point the
# export macro writes, with hostile arguments) and the backend's own unit tests. Needs a
# nightly toolchain (`-Zsanitizer`); --target keeps build scripts and proc macros
# uninstrumented. Tests that build plugins with a nested cargo or compile C programs are
# left out (the nested builds would inherit the sanitizer flags without the target).
#
#   scripts/asan.sh            # uses CARGO_TARGET_DIR=target/asan
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export RUSTFLAGS="-Zsanitizer=address"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
target="$(rustc -vV | sed -n 's/^host: //p')"
cargo +nightly test --no-fail-fast --target "$target" \
    -p hipdnn-data-sdk -p hipdnn-flatbuffers-sdk -p hipdnn-backend --lib
cargo +nightly test --no-fail-fast --target "$target" -p hipdnn-flatbuffers-sdk --tests
cargo +nightly test --no-fail-fast --target "$target" -p hipdnn-plugin-sdk \
    --lib --test entry_points --test engines_panic --test knob_factory
