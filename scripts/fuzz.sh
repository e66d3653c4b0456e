#!/usr/bin/env bash
# fuzz.sh: fuzzes the wire decoders (what a receiver decodes from a peer's bytes: the lead, its
# header and region table) with cargo-fuzz (libFuzzer), then reports executions and findings.
#
#   bash scripts/fuzz.sh [SECONDS per target, default 120]      (make fuzz; FUZZ_SECONDS)
#
# Installs what it needs when missing: Rust nightly (rustup; cargo fuzz needs its sanitizer
# flags) and cargo-fuzz (cargo install, from crates.io). The seed corpus is made from real
# leads (mpicd/examples/fuzz_seeds.rs) into fuzz/corpus/<target>/, where libFuzzer also keeps
# the inputs it finds interesting. A crash, panic or failed check is a finding: libFuzzer stops
# that target and leaves the input in fuzz/artifacts/<target>/; the script then exits 1.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT" || exit 1
if [[ -d "$HOME/.cargo/bin" ]]; then PATH="$HOME/.cargo/bin:$PATH"; fi

SECONDS_PER_TARGET=${1:-${FUZZ_SECONDS:-120}}
TARGETS=(wire_lead wire_table)

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz: installing Rust nightly (rustup toolchain install nightly --profile minimal)" >&2
    rustup toolchain install nightly --profile minimal || exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz (cargo install cargo-fuzz --locked)" >&2
    cargo install cargo-fuzz --locked || exit 1
fi

cargo run --quiet --release -p mpicd --features fuzzing --example fuzz_seeds -- fuzz/corpus || exit 1

found=0
summary=()
for t in "${TARGETS[@]}"; do
    log=target/fuzz-$t.log
    mkdir -p target
    echo "fuzz: $t for ${SECONDS_PER_TARGET} s (log $log)" >&2
    (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1) >"$log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    corpus=$(ls "fuzz/corpus/$t" 2>/dev/null | wc -l)
    if ((rc != 0)); then
        found=1
        artifact=$(ls -t "fuzz/artifacts/$t" 2>/dev/null | head -1)
        summary+=("$t: FINDING after ${runs:-?} executions (exit $rc): fuzz/artifacts/$t/$artifact; see $log")
        grep -m3 -E 'panicked|ERROR|SUMMARY' "$log" | sed 's/^/    /' >&2
    else
        summary+=("$t: ${runs:-?} executions in ${SECONDS_PER_TARGET} s, no finding, corpus $corpus inputs")
    fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $found
