#!/usr/bin/env bash
# The one command that runs every test: installs what is missing (ops/setup.sh), builds the
# `scribe` binary the black-box tests start, then runs the whole workspace's tests in the release
# profile (burn is compiled once per run, and fast).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash ops/setup.sh
cargo build --release --workspace --bins
cargo test --release --workspace --no-fail-fast
