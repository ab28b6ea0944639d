"""drvcalls' pytest-benchmark suite: each test times one driver call (examples/benchmarks)."""

import pytest

import drvcalls


@pytest.fixture(scope="module", autouse=True)
def context():
    drvcalls.setup()


@pytest.fixture(autouse=True)
def binding(benchmark):
    benchmark.extra_info["cuparity_binding"] = drvcalls.CUPARITY_BINDING


def test_ctx_get_current(benchmark):
    benchmark(drvcalls.ctx_get_current)


def test_driver_get_version(benchmark):
    benchmark(drvcalls.driver_get_version)


def test_alloc_free_4k(benchmark):
    benchmark(drvcalls.alloc_free_4k)
