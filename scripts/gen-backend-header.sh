#!/usr/bin/env bash
# Regenerates backend/include/hipdnn_backend.h from the backend's C API with the pinned
# cbindgen (config: backend/cbindgen.toml), and the sub-headers it includes (hipDNN's
# enumerations, from backend/src/capi/enums) with the backend's gen_headers example.
#   scripts/gen-backend-header.sh          rewrite the committed headers
#   scripts/gen-backend-header.sh --check  fail (exit 1) if a committed header differs
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cbindgen="$(scripts/ensure-cbindgen.sh)"
out=backend/include/hipdnn_backend.h
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cbindgen" --quiet --config backend/cbindgen.toml --crate hipdnn-backend --output "$work/hipdnn_backend.h" backend
gen_headers=(cargo run --quiet --locked -p hipdnn-backend --example gen_headers --)
if [[ "${1:-}" == "--check" ]]; then
    if ! diff -u "$out" "$work/hipdnn_backend.h"; then
        echo "$out is stale: run scripts/gen-backend-header.sh" >&2
        exit 1
    fi
    "${gen_headers[@]}" --check "$(dirname "$out")"
    echo "backend headers are up to date"
else
    mkdir -p "$(dirname "$out")"
    cp "$work/hipdnn_backend.h" "$out"
    "${gen_headers[@]}" "$(dirname "$out")"
    echo "wrote $out and its sub-headers"
fi
