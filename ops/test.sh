#!/usr/bin/env bash
# The one command that runs every test: installs what is missing (ops/setup.sh), checks the style
# (rustfmt, clippy with warnings denied, the API documentation with warnings denied), then runs
# the whole workspace's tests in the release profile (burn is compiled once per run, and fast),
# then the speech and speaker models' GPU tests on Vulkan and clippy over the wgpu build.
# One cargo invocation builds everything, including the `scribe` and `scribe-bench` binaries the
# black-box tests start (their crates' own integration tests make cargo build them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash ops/setup.sh
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --workspace --no-deps
# No import circle between the modules of the runtime and of the edge.
python3 ops/module_cycles.py actors/src
python3 ops/module_cycles.py api/src
cargo test --release --workspace --no-fail-fast
# The speech and speaker models' GPU path on Vulkan (Mesa's lavapipe here), against the CPU
# path, and the wgpu build's code through clippy; both crates in each invocation, so burn is
# built once with one set of features. (The cuda feature is not built here: cubecl's CUDA
# runtime downloads an LLVM bundle from the internet while it builds.)
cargo test --release -p scribe-whisper -p scribe-diarize --features scribe-whisper/wgpu,scribe-diarize/wgpu --test devices --test model_geometries
cargo clippy --release -p scribe-whisper -p scribe-diarize --features scribe-whisper/wgpu,scribe-diarize/wgpu --all-targets -- -D warnings
