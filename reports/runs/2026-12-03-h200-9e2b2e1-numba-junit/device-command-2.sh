#!/usr/bin/env bash
# Issue 28 scouting, part 2: where cuda.bindings' tests are, and the audit of the pytest map.
set -uo pipefail
python3 - <<'PY'
import importlib.util, os
for name in ["cuda.bindings", "cuda.core", "cupy", "numba_cuda"]:
    spec = importlib.util.find_spec(name)
    if not spec: print(name, "not installed"); continue
    root = os.path.dirname(spec.origin or list(spec.submodule_search_locations)[0])
    tests = [d for d, _, f in os.walk(root) if os.path.basename(d) == "tests"]
    print(name, root, "tests folders:", tests[:5])
PY
pip list 2>/dev/null | grep -i -E "cuda|numba|cupy|pytest|junit" | head -20
zcat reports/runs/2026-12-03-h200-9e2b2e1-numba-junit/map-nv0-captured.json.gz > /tmp/map.json
.device/bin/cuparity audit --map /tmp/map.json > $OUT/audit-pytest-map.txt 2>&1; echo "audit rc $?"
head -30 $OUT/audit-pytest-map.txt
