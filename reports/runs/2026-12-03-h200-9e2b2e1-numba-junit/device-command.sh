#!/usr/bin/env bash
# Reconnaissance for issue 28: Numba 0.68's own driver tests under pytest's JUnit XML, per binding,
# the first under `cuparity capture`. numba-cuda is hidden as scripts/device/package-check does.
set -uo pipefail
B=$PWD/.device/bin
hide=$(mktemp -d)
cat >"$hide/sitecustomize.py" <<'PY'
import importlib.abc, sys
sys.meta_path[:] = [f for f in sys.meta_path
                    if type(f).__module__ != "_numba_cuda_redirector"
                    and type(f).__name__ != "NumbaCudaFinder"]
class _HideNumbaCuda(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numba_cuda" or name.startswith("numba_cuda."):
            raise ModuleNotFoundError(f"hidden by recon28: {name}")
        return None
sys.meta_path.insert(0, _HideNumbaCuda())
PY
cd /tmp
python3 -c "import pytest, numba; print('pytest', pytest.__version__, 'numba', numba.__version__)"
python3 -c "import xdist; print('xdist', xdist.__version__)" 2>&1 | tail -1
sel=(--pyargs numba.cuda.tests.cudadrv -p no:cacheprovider -q -k "not managed_alloc")
run() { # NAME VAR=VALUE... -- [capture]
  local name=$1; shift
  local t0=$(date +%s.%N)
  env PYTHONPATH="$hide" "$@" timeout 200 python3 -m pytest "${sel[@]}" --junitxml=$OUT/$name.xml \
    > /tmp/$name.log 2>&1
  local rc=$?
  echo "$name rc $rc in $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s: $(tail -1 /tmp/$name.log)"
  tail -30 /tmp/$name.log > $OUT/$name.log
}
run nv0 NUMBA_CUDA_USE_NVIDIA_BINDING=0
run nv0-ptds NUMBA_CUDA_USE_NVIDIA_BINDING=0 NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1
run nv1 NUMBA_CUDA_USE_NVIDIA_BINDING=1
t0=$(date +%s)
env PYTHONPATH="$hide" NUMBA_CUDA_USE_NVIDIA_BINDING=0 timeout 240 $B/cuparity capture --out $OUT/map-nv0-captured.json -- \
  python3 -m pytest "${sel[@]}" --junitxml=$OUT/nv0-captured.xml > /tmp/cap.log 2>&1
echo "captured nv0 rc $? in $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/cap.log)"
ls -la $OUT
