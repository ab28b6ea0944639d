"""Takes numba-cuda out of the way, so that `import numba.cuda` finds Numba's own package.

numba-cuda installs `_numba_cuda_redirector.pth`, which puts a finder on sys.meta_path sending
`numba.cuda` to numba_cuda's copy. .pth files run before sitecustomize, so that finder is already
there to remove; refusing numba_cuda itself as well keeps a later import from bringing it back.
With numba-cuda absent this changes nothing. It is on PYTHONPATH for every process of the suite,
so the children Numba's tests spawn see the same Numba.
"""
import importlib.abc
import sys

sys.meta_path[:] = [f for f in sys.meta_path
                    if type(f).__module__ != "_numba_cuda_redirector"
                    and type(f).__name__ != "NumbaCudaFinder"]


class _HideNumbaCuda(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numba_cuda" or name.startswith("numba_cuda."):
            raise ModuleNotFoundError(f"hidden by matrices/numba-suite: {name}")
        return None


sys.meta_path.insert(0, _HideNumbaCuda())
