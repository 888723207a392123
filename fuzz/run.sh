#!/usr/bin/env bash
# Run fuzz targets: `fuzz/run.sh [TARGET...]` (default: all), each for RUNS executions (default 10 million) or
# FUZZ_SECONDS (default 3600), whichever ends first. Installs cargo-fuzz when missing. The pinned stable toolchain
# builds libFuzzer targets with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs nightly-only sanitizer flags).
# The corpus grows in fuzz/corpus/<target> (not committed); fuzz/seeds/<target> is the committed seed corpus;
# a crash is written to fuzz/artifacts/<target>/ and ends the run with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-10000000}
SECONDS_LIMIT=${FUZZ_SECONDS:-3600}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
cargo fuzz build -O
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(cargo fuzz list))
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  echo "== $t: up to $RUNS executions or ${SECONDS_LIMIT}s"
  # One rayon thread: the inputs are small and the fuzzer is one process per core.
  RAYON_NUM_THREADS=1 "target/x86_64-unknown-linux-gnu/release/$t" "corpus/$t" "seeds/$t" \
    -runs="$RUNS" -max_total_time="$SECONDS_LIMIT" -max_len=8192 -timeout=60 -rss_limit_mb=4096 \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+ +DONE|Done|stat::|==|SUMMARY|thread)" || true
done
