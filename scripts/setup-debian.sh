#!/usr/bin/env bash
# Installs what the build and tests need besides Rust, on Debian: a C/C++ compiler (the C
# header and C API tests), valgrind (the C API leak test), python3-venv (the pinned flatc).
# Idempotent; does nothing when everything is present. Needs root (or sudo) to install.
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(gcc)
command -v c++ >/dev/null || need+=(g++)
command -v valgrind >/dev/null || need+=(valgrind)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
if [[ ${#need[@]} -eq 0 ]]; then
    exit 0
fi
echo "setup-debian: installing ${need[*]}" >&2
sudo=""
[[ $EUID -eq 0 ]] || sudo="sudo"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
