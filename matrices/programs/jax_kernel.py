"""JAX, one kernel: a jitted product and sum on the GPU, checked on the host
(matrices/programs.toml). Exits 77 when JAX is not installed, 1 when it finds no GPU or the result
is wrong.
"""

import sys

try:
    import jax
    import jax.numpy as jnp
except ImportError as e:
    print(f"jax is not installed: {e}")
    sys.exit(77)

try:
    gpus = jax.devices("gpu")
except RuntimeError as e:
    print(f"jax {jax.__version__}: no GPU backend: {e}")
    sys.exit(1)
# int32 throughout: JAX truncates int64 to int32 unless jax_enable_x64 is set (H100 run of
# 2026-12-06: a 2^20-element int64 sum came back as -1048576), so the sum must fit 31 bits.
n = 1 << 10
x = jax.device_put(jnp.arange(n, dtype=jnp.int32), gpus[0])
total = int(jax.jit(lambda a: (a * 2).sum())(x).block_until_ready())
expected = n * (n - 1)
print(f"jax {jax.__version__} on {gpus[0]}: sum {total}, expected {expected}")
sys.exit(0 if total == expected else 1)
