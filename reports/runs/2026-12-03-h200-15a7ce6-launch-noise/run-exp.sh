#!/usr/bin/env bash
# Device: per-launch timing experiment through the shim, then the default matrix at -j 6 (baseline).
set -u
B=$PWD/.device/bin; E=$PWD/build-exp; O=$OUT
export LD_LIBRARY_PATH=$B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
for ptds in 0 1; do
  for mode in none proc dlsym; do
    case $mode in
      none) F="";;
      proc) F="cuLaunchKernel:delay_ns=18@proc;cuLaunchKernel_ptsz:delay_ns=18@proc";;
      dlsym) F="cuLaunchKernel:delay_ns=18@dlsym;cuLaunchKernel_ptsz:delay_ns=18@dlsym;cuLaunchKernel:delay_ns=0@proc;cuLaunchKernel_ptsz:delay_ns=0@proc";;
    esac
    CUPARITY_SHIM_TARGET=libcuda.so.1 CUPARITY_SHIM_FAULTS="$F" timeout 60 $E/latexp $B/libcuparity_fault_shim.so $E/basic.sm_90.cubin 7 $O/exp-$mode-$ptds.txt $ptds 2>>$O/exp.err
  done
done
gzip $O/exp-*.txt; tar cf $O/exp.tar -C $O $(cd $O && ls exp-*.txt.gz) && rm $O/exp-*.txt.gz



