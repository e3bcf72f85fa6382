#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for FUZZ_SECONDS each (`make
# fuzz` calls this after building). Each target starts from a scratch copy
# of its committed corpus, so the inputs it finds never dirty the checkout;
# crashes go to BUILD/crashes/<target>/. Exits 1 when any target crashed,
# naming the inputs that did, after running all of them.
#   tests/fuzz/run.sh BUILD_DIR [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../.."

build=${1:?usage: tests/fuzz/run.sh BUILD_DIR [TARGET...]}
shift
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_npy fuzz_project fuzz_signature fuzz_expression fuzz_logparse fuzz_sweep fuzz_compare fuzz_checks)

# Longest input per target: a little above the largest real input, so that
# time goes into structure rather than into ever longer inputs.
max_len() {
    case $1 in
    fuzz_expression) echo 256 ;;
    fuzz_sweep) echo 512 ;;
    fuzz_checks) echo 2048 ;;
    fuzz_npy) echo 4096 ;;
    *) echo 8192 ;;
    esac
}

# halt_on_error and abort_on_error: any finding ends the run with a crash
# file. The UBSan suppressions file lists, with a reason each, the reports
# from code that is not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1:suppressions=$PWD/tests/fuzz/ubsan.supp}
# The engine's Qt never needs a display here, and must not open one.
export QT_QPA_PLATFORM=offscreen

failed=()
for t in "${targets[@]}"; do
    bin=$build/bin/$t
    corpus=tests/fuzz/corpus/$t
    work=$build/work/$t
    crashes=$build/crashes/$t
    log=$build/logs/$t.log
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin is missing (build with make fuzz)" >&2
        exit 1
    fi
    rm -rf "$work"
    mkdir -p "$work" "$crashes" "$(dirname "$log")"
    cp "$corpus"/* "$work"/
    before=$(ls "$crashes" | wc -l)
    "$bin" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$work" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    new=$(($(ls "$crashes" | wc -l) - before))
    if [ "$rc" -ne 0 ] || [ "$new" -ne 0 ]; then
        echo "fuzz: $t FAILED (exit $rc); log: $log"
        grep -E 'ERROR: |runtime error: |SUMMARY: |invariant broken|fuzz_[a-z]*: ' "$log" | head -n 5 | sed 's/^/  /'
        # Only this run's inputs: the folder keeps earlier runs' too.
        for f in $(ls -t "$crashes" | head -n "$new"); do
            echo "  input: $crashes/$f  (reproduce: $bin $crashes/$f)"
        done
        failed+=("$t")
    else
        echo "fuzz: $t ok: ${runs:-?} runs in ${took:-$seconds} s (${rate:-?}/s), ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) -> $(ls "$work" | wc -l)"
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds} s each without a finding"
