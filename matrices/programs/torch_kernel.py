"""PyTorch, one kernel: a product and a sum on the GPU, checked on the host (matrices/programs.toml).

Exits 77 when PyTorch is not installed (the matrix's skip_exit_code: the cell says the package is
missing and the run goes on), 1 when it is but the result is wrong or CUDA is not available.
"""

import sys

try:
    import torch
except ImportError as e:
    print(f"torch is not installed: {e}")
    sys.exit(77)

if not torch.cuda.is_available():
    print(f"torch {torch.__version__}: torch.cuda.is_available() is False")
    sys.exit(1)
x = torch.arange(1 << 20, device="cuda", dtype=torch.float64)
total = float((x * 2).sum())  # one elementwise kernel, one reduction, a copy back
torch.cuda.synchronize()
expected = float((1 << 20) * ((1 << 20) - 1))
print(f"torch {torch.__version__}: sum {total}, expected {expected}")
sys.exit(0 if total == expected else 1)
