"""The binding decision, as numba/core/config.py makes it (see the package's docstring)."""

import os
import warnings


def _int(name):
    try:
        return int(os.environ.get(name, "0"))
    except ValueError:
        return 0


CUDA_USE_NVIDIA_BINDING = _int("NUMBA_CUDA_USE_NVIDIA_BINDING")
CUDA_PER_THREAD_DEFAULT_STREAM = _int("NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM")

if CUDA_USE_NVIDIA_BINDING:
    try:
        import cuda  # noqa: F401
    except ImportError as error:
        warnings.warn("CUDA Python bindings requested (the environment variable "
                      "NUMBA_CUDA_USE_NVIDIA_BINDING is set), but they are not importable: "
                      f"{error.msg}.")
        CUDA_USE_NVIDIA_BINDING = False
