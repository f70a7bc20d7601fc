#!/usr/bin/env bash
# Regenerates flatbuffers-sdk/src/generated from schemas/*.fbs with the pinned flatc.
#   scripts/gen-flatbuffers.sh          rewrite the committed generated code
#   scripts/gen-flatbuffers.sh --check  fail (exit 1) if the committed code differs
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
flatc="$(scripts/ensure-flatc.sh)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 scripts/rust_schema_variant.py schemas "$work/schemas"
"$flatc" --rust --gen-all --rust-module-root-file -o "$work/generated" "$work/schemas/all_schemas.fbs"
out=flatbuffers-sdk/src/generated
if [[ "${1:-}" == "--check" ]]; then
    if ! diff -r -u "$out" "$work/generated"; then
        echo "flatbuffers-sdk/src/generated is stale: run scripts/gen-flatbuffers.sh" >&2
        exit 1
    fi
    echo "generated FlatBuffers code is up to date"
else
    rm -rf "$out"
    cp -r "$work/generated" "$out"
    echo "wrote $out"
fi
