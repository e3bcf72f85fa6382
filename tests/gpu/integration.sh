#!/usr/bin/env bash
# The GPU integration run: the device tests (the sanitizer's in the
# background, the timing-sensitive ones alone afterwards), screenshots of the
# panels that only a GPU fills, and the command line's overlap, graph, sweep
# and guard numbers. Runs on any machine with an NVIDIA GPU, from a built
# tree (make build).
#
# usage: tests/gpu/integration.sh [OUT]   (OUT: where logs/ and shots/ go; default build/gpu-integration)
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-$PWD/build/gpu-integration}}
mkdir -p "$OUT"
export HOME=$(mktemp -d)
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/build/bin
L=$OUT/logs; S=$OUT/shots; mkdir -p $L $S
# sanitizer test in the background (slow), the rest in parallel, timing-sensitive ones alone afterwards
(timeout 400 ctest --test-dir build -R tst_gpu_memcheck --output-on-failure --timeout 400 > $L/memcheck.txt 2>&1; echo "memcheck rc=$?" >> $L/memcheck.txt) &
# tst_gpu_export's rows (every preset x target, builds included) run 6 at a time on their own, below.
timeout 300 ctest --test-dir build -L gpu -E "tst_gpu_memcheck|tst_gpu_timing|tst_gpu_streams|tst_gpu_export" -j4 --output-on-failure --timeout 280 > $L/gpu.txt 2>&1; echo "gpu rc=$?"
grep -E "tests passed|\*\*\*Failed|Failed  |Timeout|Passed" $L/gpu.txt | tail -30
timeout 200 ctest --test-dir build -R "tst_gpu_streams|tst_gpu_timing" --output-on-failure --timeout 180 -V > $L/streams_timing.txt 2>&1; echo "streams/timing rc=$?"
grep -E "QDEBUG|QWARN|ratio|PASS|FAIL|XFAIL|tests passed" $L/streams_timing.txt | head -40
G="env QT_QPA_PLATFORM=offscreen $B/kernel-playground"
timeout 60 $B/kpg devices --ceilings > $L/ceilings.txt 2>&1; cat $L/ceilings.txt | tail -8
timeout 60 $G --preset vector_add --sweep "block.x=32:1024:pow2" --show sweep --screenshot $S/sweep.png > $L/shot_sweep.txt 2>&1; echo "sweep shot rc=$?"
timeout 60 $G --preset vector_add --sweep "block.x=32:1024:pow2" --sweep-plot roofline --show sweep --screenshot $S/roofline.png > $L/shot_roof.txt 2>&1; echo "roof shot rc=$?"
timeout 60 $G --preset matmul_tiled --run --show occupancy --screenshot $S/occupancy.png > $L/shot_occ.txt 2>&1; echo "occ shot rc=$?"
timeout 60 $G --preset overlap_4 --run --show timeline --screenshot $S/timeline.png > $L/shot_tl.txt 2>&1; echo "timeline shot rc=$?"
timeout 60 $G --preset heat --run --show results --screenshot $S/results.png > $L/shot_res.txt 2>&1; echo "results shot rc=$?"
for n in 1 2 4 8; do timeout 60 $B/kpg run presets/overlap_$n/overlap_$n.kpg 2>&1 | grep -i -E "timeline|overlap|total|median" | head -4; done > $L/overlap.txt; cat $L/overlap.txt
timeout 60 $B/kpg run presets/graph_replay/graph_replay.kpg --graph 2>&1 | tail -6 > $L/graph.txt; cat $L/graph.txt
timeout 120 $B/kpg sweep presets/vector_add/vector_add.kpg --axis block.x=32:1024:pow2 --csv $L/sweep.csv --plot $S/sweep_cli.png > $L/sweep_cli.txt 2>&1; echo "sweep cli rc=$?"; tail -4 $L/sweep_cli.txt
timeout 60 $B/kpg run presets/memcheck_guard/memcheck_guard.kpg > $L/guard.txt 2>&1; echo "guard rc=$?"; tail -5 $L/guard.txt
mkdir -p $L/export
$B/tst_gpu_export -datatags 2>/dev/null | awk '$2 == "reproduces" {print $3}' > $L/export/rows.txt
xargs -P 6 -I{} sh -c 'f='$L'/export/$(echo {} | tr / _).txt; HOME=$(mktemp -d) timeout 300 '$B'/tst_gpu_export "reproduces:{}" > $f 2>&1; echo "{} $(grep -oE "^(PASS|FAIL!|SKIP) " $f | grep -v "^PASS" | head -1 || true)"' < $L/export/rows.txt | sort > $L/export.txt
echo "export rows: $(wc -l < $L/export/rows.txt), not passed:"; awk 'NF > 1' $L/export.txt
timeout 200 $B/tst_gpu_export medians 2>&1 | grep -E "QINFO|FAIL" > $L/export_medians.txt; cat $L/export_medians.txt
wait
tail -15 $L/memcheck.txt
ls $OUT/shots
