#!/usr/bin/env bash
# Installs what the build and tests need besides Rust, on Debian: a C/C++ compiler (the C
# header and C API tests), valgrind (the C API leak test), python3-venv (the pinned flatc),
# and LLVM/MLIR 22 for the compiler (compiler/; Debian 12 has them in bookworm-security;
# libzstd-dev and libpolly-22-dev are link-time needs of the MLIR crates, llvm-22-tools has
# FileCheck for the compiler's LIT-style tests), and HIP 5.2's headers and runtime
# (libamdhip64-dev: hipdnn-rocm-sys checks its declarations against the headers and loads the
# runtime, which reports no device here).
# Idempotent; does nothing when everything is present. Needs root (or sudo) to install.
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(gcc)
command -v c++ >/dev/null || need+=(g++)
command -v valgrind >/dev/null || need+=(valgrind)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
for pkg in libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libclang-22-dev clang-22 \
    libpolly-22-dev libzstd-dev zlib1g-dev libxml2-dev libz3-dev libffi-dev libncurses-dev \
    libamdhip64-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [[ ${#need[@]} -eq 0 ]]; then
    exit 0
fi
echo "setup-debian: installing ${need[*]}" >&2
sudo=""
[[ $EUID -eq 0 ]] || sudo="sudo"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
