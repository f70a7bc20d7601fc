#!/usr/bin/env bash
# Cross-checks our wire format against flatc's own (C++) implementation, using the
# wire-true schemas in schemas/ (including the TensorValue union of structs):
#   1. flatc decodes each of our golden binaries to JSON (tests/data/*.flatc.json);
#   2. flatc encodes our JSON form of the same value to binary (tests/data/*.flatc.bin).
# The Rust test `flatc_reads_our_buffers_and_writes_buffers_we_read` checks that both
# files hold the fixture's values; this script checks they are what flatc produces now.
#   scripts/check-wire-compat.sh          check (exit 1 when a committed file is stale)
#   scripts/check-wire-compat.sh --bless  rewrite tests/data/*.flatc.{json,bin}
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
flatc="$(scripts/ensure-flatc.sh)"
data=flatbuffers-sdk/tests/data
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for pair in conv_bias_relu:graph scalars:graph engine_details:engine_details engine_config:engine_config; do
    name="${pair%%:*}"
    schema="schemas/${pair##*:}.fbs"
    mkdir -p "$work/json" "$work/bin"
    "$flatc" --json --strict-json --raw-binary -o "$work/json" "$schema" -- "$data/$name.bin"
    "$flatc" --binary -o "$work/bin" "$schema" "$data/$name.json"
    for made in "json/$name.json:$name.flatc.json" "bin/$name.bin:$name.flatc.bin"; do
        from="$work/${made%%:*}"
        to="$data/${made##*:}"
        if [[ "${1:-}" == "--bless" ]]; then
            cp "$from" "$to"
        elif ! cmp -s "$from" "$to"; then
            echo "$to is stale: run scripts/check-wire-compat.sh --bless" >&2
            status=1
        fi
    done
done
[[ $status -eq 0 ]] && echo "wire format agrees with flatc $("$flatc" --version | awk '{print $3}')"
exit $status
