#!/usr/bin/env bash
# Warm-up check (bench + per-process 18 ns delay) then three latency-floor runs at 3.6 s / 0.3 s.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/bin
.device/bin/cuparity_fault_delay_bench --benchmark_filter='BM_precise_delay' --benchmark_min_time=0.1 > $OUT/bench.txt 2>&1
bash build-exp/run-exp5.sh
echo "exp5 rc $?"
scripts/device/latency-floor $OUT/lf --runs 3 --first 1
echo "floor rc $?"
gzip $OUT/lf/summary.json
tar cf $OUT/lf.tar -C $OUT lf && rm -rf $OUT/lf
