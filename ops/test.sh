#!/usr/bin/env bash
# The one command that runs every test: installs what is missing (ops/setup.sh), then runs the
# whole workspace's tests in the release profile (burn is compiled once per run, and fast). One
# cargo invocation builds everything, including the `scribe` binary the black-box tests start
# (ops' own integration tests make cargo build it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash ops/setup.sh
# No import circle between the runtime's modules.
python3 ops/module_cycles.py actors/src
cargo test --release --workspace --no-fail-fast
