"""simpkg's tests as its package ships them: run with `pytest --pyargs simpkg.tests`.

They stand for numba-cuda's `numba.cuda.tests`, which its wheel installs without the conftest.py
that provides their fixtures: that file and the pytest.ini saying `addopts = --pyargs
numba.cuda.tests` are in the source tree's testing/ folder, and pytest only loads them when it is
started there. tests/external/simpkg_root is that folder for simpkg (its conftest provides
`simpkg_config`), tests/external/simpkg_wheel the same folder without the conftest.
"""
