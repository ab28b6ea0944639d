#!/usr/bin/env bash
set -u
B=$PWD/.device/bin; E=$PWD/build-exp; O=$OUT
export LD_LIBRARY_PATH=$B
run() { # mode ptds variant
  case $1 in
    none) F="";;
    proc) F="cuLaunchKernel:delay_ns=18@proc;cuLaunchKernel_ptsz:delay_ns=18@proc";;
    dlsym) F="cuLaunchKernel:delay_ns=18@dlsym;cuLaunchKernel_ptsz:delay_ns=18@dlsym;cuLaunchKernel:delay_ns=0@proc;cuLaunchKernel_ptsz:delay_ns=0@proc";;
  esac
  CUPARITY_SHIM_TARGET=libcuda.so.1 CUPARITY_SHIM_FAULTS="$F" timeout 60 $E/latexp $B/libcuparity_fault_shim.so $E/basic.sm_90.cubin 5 $O/i-$1-$2-$3.txt $2 2 0 $3 2>>$O/exp.err
}
for r in a b; do run none 0 inter; run dlsym 0 inter; run proc 0 inter; run none 1 inter; run proc 1 inter; run dlsym 1 inter; for m in none dlsym proc; do mv $O/i-$m-0-inter.txt $O/i-$m-0-inter$r.txt; mv $O/i-$m-1-inter.txt $O/i-$m-1-inter$r.txt; done; done
gzip $O/i-*.txt; tar cf $O/exp3.tar -C $O $(cd $O && ls i-*.txt.gz) && rm $O/i-*.txt.gz
