"""pytest-benchmark's machine and commit facts cost about a second a process (py-cpuinfo, and git
run in the checkout), paid once per cell and round: cuparity reads neither, so this example
skips them (the hooks are pytest-benchmark's own: the first result wins)."""

import platform


def pytest_benchmark_generate_machine_info(config):
    return {"node": platform.node(), "python_version": platform.python_version()}


def pytest_benchmark_generate_commit_info(config):
    return {}
