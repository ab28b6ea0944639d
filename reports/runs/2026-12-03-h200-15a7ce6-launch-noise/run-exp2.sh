#!/usr/bin/env bash
set -u
B=$PWD/.device/bin; E=$PWD/build-exp; O=$OUT
export LD_LIBRARY_PATH=$B
run() { # mode ptds batches busy
  case $1 in
    none) F="";;
    proc) F="cuLaunchKernel:delay_ns=18@proc;cuLaunchKernel_ptsz:delay_ns=18@proc";;
    dlsym) F="cuLaunchKernel:delay_ns=18@dlsym;cuLaunchKernel_ptsz:delay_ns=18@dlsym;cuLaunchKernel:delay_ns=0@proc;cuLaunchKernel_ptsz:delay_ns=0@proc";;
  esac
  CUPARITY_SHIM_TARGET=libcuda.so.1 CUPARITY_SHIM_FAULTS="$F" timeout 60 $E/latexp $B/libcuparity_fault_shim.so $E/basic.sm_90.cubin 4 $O/e-$1-$2-$3-$4.txt $2 $3 $4 2>>$O/exp.err
}
for v in "2 0" "1 0" "2 400000" "1 300000"; do
  set -- $v
  run none 0 $1 $2; run dlsym 0 $1 $2; run none 1 $1 $2
done
gzip $O/e-*.txt; tar cf $O/exp2.tar -C $O $(cd $O && ls e-*.txt.gz) && rm $O/e-*.txt.gz
