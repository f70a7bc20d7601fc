#!/usr/bin/env bash
# Prints the path of the pinned cbindgen, installing it into target/tools when needed
# (`cargo install --locked`, from crates.io). Idempotent.
set -euo pipefail
CBINDGEN_VERSION="0.29.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$root/target/tools/cbindgen-$CBINDGEN_VERSION"
bin="$prefix/bin/cbindgen"
if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -q " $CBINDGEN_VERSION\$"; then
    echo "$bin"
    exit 0
fi
cargo install --quiet --locked cbindgen --version "$CBINDGEN_VERSION" --root "$prefix" >&2
echo "$bin"
