"""A stand-in for CuPy where it is not installed (CI): its public API as far as cuparity's Python
probe calls it, over the simulated driver the way CuPy reaches the driver (cuda/driver.py and
cuda/runtime.py say how). Importable wherever fake_cupy is on PYTHONPATH. Written for cuparity;
no copy of CuPy's."""

from . import cuda

__version__ = "0.0+cuparity.fake"


class RawKernel:
    """A kernel of a RawModule: called with (grid, block, args), launched on the current stream."""

    def __init__(self, function):
        self._function = function

    def __call__(self, grid, block, args, *, shared_mem=0):
        if args:
            raise ValueError("the stand-in launches kernels without arguments only")
        grid, block = tuple(grid) + (1, 1), tuple(block) + (1, 1)
        cuda.driver.launchKernel(self._function, grid[0], grid[1], grid[2], block[0], block[1],
                                 block[2], shared_mem, cuda.get_current_stream().ptr, 0, 0)


class RawModule:
    """A module loaded from a cubin or PTX file (path=); CUDA source (code=) needs NVRTC, which
    the stand-in lacks."""

    def __init__(self, code=None, *, path=None):
        if path is None:
            raise NotImplementedError("the stand-in loads modules from a path only")
        self._module = cuda.driver.moduleLoad(path)

    def get_function(self, name):
        return RawKernel(cuda.driver.moduleGetFunction(self._module, name))
