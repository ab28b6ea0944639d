// The Driver facade: lazy once-only resolution, checked calls, errors that name the call.
#include "harness/driver/driver.hpp"
#include "harness/session/session.hpp"
#include "test_support.hpp"

#include <atomic>
#include <barrier>
#include <catch2/catch.hpp>
#include <thread>

using namespace cuparity;

namespace {

// A backend over functions in this file: lets the facade be tested without any driver.
std::atomic<int> fake_calls{0};
CUresult CUDAAPI fake_driver_version(int *v) {
  ++fake_calls;
  *v = 12345;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_init(unsigned int) {
  return CUDA_ERROR_NO_DEVICE;
}
CUresult CUDAAPI fake_error_name(CUresult code, const char **name) {
  *name = code == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_stream_query(CUstream) {
  return CUDA_ERROR_NO_DEVICE;
}
CUresult CUDAAPI fake_mem_free(CUdeviceptr) {
  return CUDA_ERROR_NO_DEVICE;
}

class fake_backend final : public backend {
public:
  std::atomic<int> resolves{0};
  std::string_view name() const noexcept override { return "fake"; }
  const std::string &driver_path() const noexcept override { return m_path; }
  bool per_thread_default_stream() const noexcept override { return false; }
  resolution resolve(const entry_info &e) override {
    ++resolves;
    // Slow resolution widens the window in which concurrent first calls could race.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    resolution r;
    if (e.name == "cuDriverGetVersion")
      r.address = reinterpret_cast<void *>(&fake_driver_version), r.symbol = "fake_version";
    else if (e.name == "cuInit")
      r.address = reinterpret_cast<void *>(&fake_init), r.symbol = "fake_init";
    else if (e.name == "cuStreamQuery")
      r.address = reinterpret_cast<void *>(&fake_stream_query), r.symbol = "fake_stream_query";
    else if (e.name == "cuMemFree")
      r.address = reinterpret_cast<void *>(&fake_mem_free), r.symbol = "fake_mem_free";
    else if (e.name == "cuGetErrorName")
      r.address = reinterpret_cast<void *>(&fake_error_name), r.symbol = "fake_error_name";
    else
      r.missing_reason = "the fake backend has no " + std::string(e.name);
    return r;
  }

private:
  std::string m_path = "fake";
};

} // namespace

TEST_CASE("resolution is lazy and happens once under concurrent first calls", "[facade]") {
  auto fb = std::make_unique<fake_backend>();
  auto *raw_backend = fb.get();
  driver d(std::move(fb));
  CHECK(raw_backend->resolves == 0); // nothing resolved at load
  CHECK(d.binding_map().empty());

  constexpr int threads = 8;
  std::barrier start(threads);
  std::vector<std::thread> pool;
  std::atomic<int> wrong{0};
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      start.arrive_and_wait();
      int v = 0;
      d.cuDriverGetVersion(&v);
      if (v != 12345)
        ++wrong;
    });
  for (auto &t : pool)
    t.join();
  CHECK(wrong == 0);
  CHECK(raw_backend->resolves == 1);
  CHECK(d.resolve_count() == 1);
  CHECK(fake_calls >= threads);
  auto map = d.binding_map();
  REQUIRE(map.size() == 1);
  CHECK(map[0].entry == "cuDriverGetVersion");
  CHECK(map[0].symbol == "fake_version");
}

TEST_CASE("a failing call throws driver_error with code, name, entry, backend and site",
          "[facade]") {
  driver d(std::make_unique<fake_backend>());
  try {
    d.cuInit(0);
    FAIL("cuInit should have thrown");
  } catch (const driver_error &e) {
    CHECK(e.code() == CUDA_ERROR_NO_DEVICE);
    CHECK(e.code_name() == "CUDA_ERROR_NO_DEVICE");
    CHECK(e.entry() == "cuInit");
    CHECK(e.symbol() == "fake_init");
    CHECK(e.backend() == "fake");
    CHECK_FALSE(e.missing_function());
    CHECK_THAT(std::string(e.what()),
               Catch::StartsWith("cuInit (fake_init) -> CUDA_ERROR_NO_DEVICE (100) [fake] at "
                                 "test_facade.cpp:"));
  }
  CHECK(d.cuInit.raw(0) == CUDA_ERROR_NO_DEVICE); // the unchecked form returns the code
}

TEST_CASE("a failing call names its handle arguments; a failed clean-up call too", "[facade]") {
  driver d(std::make_unique<fake_backend>());
  try {
    d.cuStreamQuery(reinterpret_cast<CUstream>(0x5a0));
    FAIL("cuStreamQuery should have thrown");
  } catch (const driver_error &e) {
    CHECK(e.info().handles == "CUstream 0x5a0");
    CHECK_THAT(std::string(e.what()),
               Catch::StartsWith("cuStreamQuery (fake_stream_query) -> CUDA_ERROR_NO_DEVICE (100) "
                                 "on CUstream 0x5a0 [fake]"));
  }
  d.cuMemFree.cleanup(CUdeviceptr{0x7f00});
  const auto failures = d.take_cleanup_failures();
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0], Catch::Contains("returned CUDA_ERROR_NO_DEVICE on CUdeviceptr 0x7f00"));
}

TEST_CASE("a missing function fails when called, naming it; not at load", "[facade]") {
  driver d(std::make_unique<fake_backend>());
  CUdeviceptr p = 0;
  try {
    d.cuMemAlloc(&p, 16);
    FAIL("cuMemAlloc should have thrown");
  } catch (const driver_error &e) {
    CHECK(e.missing_function());
    CHECK(e.entry() == "cuMemAlloc");
    CHECK_THAT(std::string(e.what()), Catch::Contains("cuMemAlloc") &&
                                          Catch::Contains("does not provide") &&
                                          Catch::Contains("the fake backend has no cuMemAlloc"));
  }
  CHECK_THROWS_AS(d.cuMemAlloc.raw(&p, 16), driver_error); // no code to return: still throws
  // Resolved once even though it is missing.
  CHECK_THROWS_AS(d.cuMemAlloc(&p, 16), driver_error);
  CHECK(d.resolve_count() == 1);
}

TEST_CASE("errors have the same code, name and entry through both backends", "[facade][sim]") {
  for (const char *use_nv : {"0", "1"}) {
    auto sess = session::open(test::sim_settings({{var::use_nvidia_binding, use_nv}}));
    auto &d = sess->drv();
    d.cuInit(0);
    // No context is current in this thread: the documented answer is INVALID_CONTEXT.
    try {
      d.cuCtxSynchronize();
      FAIL("cuCtxSynchronize without a context should fail");
    } catch (const driver_error &e) {
      INFO(e.what());
      CHECK(e.code() == CUDA_ERROR_INVALID_CONTEXT);
      CHECK(e.code_name() == "CUDA_ERROR_INVALID_CONTEXT");
      CHECK(e.entry() == "cuCtxSynchronize");
      CHECK(e.symbol() == "cuCtxSynchronize");
      CHECK(e.backend() == (std::string(use_nv) == "1" ? "nvidia" : "internal"));
      CHECK_THAT(std::string(e.what()), Catch::Contains("-> CUDA_ERROR_INVALID_CONTEXT (201)"));
    }
  }
}

TEST_CASE("a function the driver lacks is reported when called, through both backends",
          "[facade][sim]") {
  // The legacy simulated driver exports no cuMemAllocAsync (and no cuGetProcAddress_v2, so
  // asking for nvidia falls back; the internal backend is what is left to test there).
  auto sess = session::open(test::sim_settings({}, CUPARITY_SIMDRIVER_LEGACY));
  auto &d = sess->drv();
  d.cuInit(0); // everything else still works
  CUdeviceptr p = 0;
  try {
    d.cuMemAllocAsync(&p, 64, nullptr);
    FAIL("cuMemAllocAsync should be missing");
  } catch (const driver_error &e) {
    CHECK(e.missing_function());
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("cuMemAllocAsync") && Catch::Contains("cuMemAllocAsync_v2"));
  }
  // On the full driver, the nvidia backend reports a name the driver does not know the same way.
  auto full = session::open(test::sim_settings(
      {{var::use_nvidia_binding, "1"}, {"CUPARITY_SIM_HIDE", "cuMemAllocAsync"}}));
  CHECK(full->drv().address(entry_id::cuMemAlloc) != nullptr);
}
