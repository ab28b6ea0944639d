#!/usr/bin/env bash
set -u
B=$PWD/.device/bin; E=$PWD/build-exp; O=$OUT
export LD_LIBRARY_PATH=$B
run() { # mode ptds tag pin
  case $1 in
    none) F="";;
    dlsym) F="cuLaunchKernel:delay_ns=18@dlsym;cuLaunchKernel_ptsz:delay_ns=18@dlsym;cuLaunchKernel:delay_ns=0@proc;cuLaunchKernel_ptsz:delay_ns=0@proc";;
  esac
  local pre=""; [ "$4" = 1 ] && pre="taskset -c 5"
  CUPARITY_SHIM_TARGET=libcuda.so.1 CUPARITY_SHIM_FAULTS="$F" timeout 60 $pre $E/latexp $B/libcuparity_fault_shim.so $E/basic.sm_90.cubin 5 $O/p-$1-$2-$3-pin$4.txt $2 2 0 2>>$O/exp.err
}
nproc > $O/nproc.txt; cat /sys/devices/system/clocksource/clocksource0/current_clocksource >> $O/nproc.txt
for r in a b; do for pin in 0 1; do run none 0 $r $pin; run dlsym 0 $r $pin; done; done
gzip $O/p-*.txt; tar cf $O/exp4.tar -C $O $(cd $O && ls p-*.txt.gz) && rm $O/p-*.txt.gz
