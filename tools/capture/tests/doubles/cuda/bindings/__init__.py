"""Test double of the cuda.bindings package (see tools/capture/tests/doubles/README.md)."""

import os as _os

# Says which PTDS parse the double's cydriver uses, so a captured map tells the two apart.
__version__ = "13.0.0+cuparity.double." + (
    "buggy" if _os.environ.get("CUPARITY_FAKE_PTDS_PARSE") == "buggy" else "fixed"
)
