#!/usr/bin/env bash
# All tests: installs the few system tools the tests use (scripts/setup-debian.sh), then
# runs the workspace's tests. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup-debian.sh
cargo test --workspace --locked "$@"
