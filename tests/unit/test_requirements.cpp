// Declared requirements: not_supported only from a requirement the cell lacks, named; a refusal
// of a met requirement fails; a call the case did not declare is a harness error; a failed
// clean-up fails the case.
#include "harness/driver/backend.hpp"
#include "harness/driver/driver_error.hpp"
#include "harness/framework/case_context.hpp"
#include "harness/framework/case_runner.hpp"
#include "harness/session/session.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using namespace cuparity::test;
using E = entry_id;

namespace {

/// Runs `def` once in a session on the simulated driver (or `driver_path`).
case_result run_on_sim(const case_def &def, vars v = {},
                       const std::string &driver_path = CUPARITY_SIMDRIVER) {
  auto sess = session::open(sim_settings(std::move(v), driver_path));
  cell_facts facts(sess->drv());
  return run_case(def, sess->drv(), sess->config(), facts);
}

/// A case that retains the primary context and allocates: what it calls it declares.
case_def allocating(std::string id) {
  case_def c{std::move(id), "allocates", [](case_context &ctx) {
               driver &d = ctx.drv();
               d.cuInit(0);
               CUdevice dev = 0;
               d.cuDeviceGet(&dev, 0);
               CUcontext pc = nullptr;
               d.cuDevicePrimaryCtxRetain(&pc, dev);
               d.cuCtxSetCurrent(pc);
               CUdeviceptr p = 0;
               d.cuMemAlloc(&p, 64);
               d.cuMemFree(p);
               d.cuCtxSetCurrent(nullptr);
               d.cuDevicePrimaryCtxRelease(dev);
             }};
  c.uses({E::cuInit, E::cuDeviceGet, E::cuDevicePrimaryCtxRetain, E::cuCtxSetCurrent, E::cuMemAlloc,
          E::cuMemFree, E::cuDevicePrimaryCtxRelease});
  return c;
}

/// A backend that binds only cuDriverGetVersion (answering 13.0); the rest is missing, or not
/// bound by the binding under test when `not_bound`.
CUresult CUDAAPI version_13(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
class bare_backend final : public backend {
public:
  explicit bare_backend(bool not_bound) : m_not_bound(not_bound) {}
  std::string_view name() const noexcept override { return "bare"; }
  const std::string &driver_path() const noexcept override { return m_path; }
  bool per_thread_default_stream() const noexcept override { return false; }
  resolution resolve(const entry_info &e) override {
    resolution r;
    if (e.name == "cuDriverGetVersion")
      r.address = reinterpret_cast<void *>(&version_13), r.symbol = "version_13";
    else
      r.missing_reason = "no " + std::string(e.name) + " here", r.not_bound = m_not_bound;
    return r;
  }

private:
  bool m_not_bound;
  std::string m_path = "bare";
};

case_result run_on_bare(const case_def &def, bool not_bound) {
  driver d(std::make_unique<bare_backend>(not_bound));
  cell_facts facts(d);
  const effective_config config;
  return run_case(def, d, config, facts);
}

} // namespace

TEST_CASE("requirements: a case whose declaration covers its calls passes", "[requirements]") {
  const auto r = run_on_sim(allocating("alloc.req.declared"));
  CHECK(r.result == outcome::pass);
  CHECK(r.message.empty());
  CHECK(r.requirement.empty());
}

TEST_CASE("requirements: a call the case did not declare is a harness error naming it",
          "[requirements]") {
  case_def c = allocating("alloc.req.undeclared");
  c.needs.entries.clear();
  c.uses({E::cuInit, E::cuDeviceGet, E::cuDevicePrimaryCtxRetain, E::cuCtxSetCurrent, E::cuMemAlloc,
          E::cuDevicePrimaryCtxRelease}); // cuMemFree left out
  const auto r = run_on_sim(c);
  CHECK(r.result == outcome::error);
  CHECK_THAT(r.message, Catch::Contains("called cuMemFree without declaring it"));
}

TEST_CASE("requirements: a cell without a declared requirement is not_supported, named, and the "
          "body does not run",
          "[requirements]") {
  bool ran = false;
  case_def c{"alloc.req.devices", "two devices", [&ran](case_context &) { ran = true; }};
  c.needs_devices(2);
  auto r = run_on_sim(c);
  CHECK(r.result == outcome::not_supported);
  CHECK(r.message == "needs 2 devices: 1");
  CHECK(r.requirement == "2 devices");
  CHECK_FALSE(ran);

  case_def attr{"alloc.req.attribute", "many SMs", [&ran](case_context &) { ran = true; }};
  attr.needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1 << 20));
  r = run_on_sim(attr);
  CHECK(r.result == outcome::not_supported);
  CHECK_THAT(r.message,
             Catch::StartsWith("needs CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT >= 1048576: "));
  CHECK(r.requirement == "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT");

  case_def tool{"alloc.req.facility", "a toolkit part", [&ran](case_context &) { ran = true; }};
  tool.needs_facility({"NoSuchTool", [] { return std::string("libnosuchtool.so: not found"); }});
  r = run_on_sim(tool);
  CHECK(r.result == outcome::not_supported);
  CHECK(r.message == "needs NoSuchTool: libnosuchtool.so: not found");

  case_def newer{"alloc.req.driver", "a newer driver", [&ran](case_context &) { ran = true; }};
  newer.needs_driver(99000);
  r = run_on_sim(newer);
  CHECK(r.result == outcome::not_supported);
  CHECK(r.message == "needs driver 99.0: the driver is 13.0");
  CHECK_FALSE(ran);
}

TEST_CASE("requirements: an entry the driver is too old for is not_supported; one a current driver "
          "lacks is a failure",
          "[requirements]") {
  bool ran = false;
  case_def c{"alloc.req.async", "stream-ordered", [&ran](case_context &) { ran = true; }};
  c.uses({E::cuMemAllocAsync});
  // The legacy simulated driver models CUDA 11.0, which predates cuMemAllocAsync (11.2).
  auto r = run_on_sim(c, {}, CUPARITY_SIMDRIVER_LEGACY);
  CHECK(r.result == outcome::not_supported);
  CHECK(r.message == "needs cuMemAllocAsync (CUDA 11.2): the driver is 11.0");
  CHECK(r.requirement == "cuMemAllocAsync");
  // A driver that reports CUDA 13.0 should have it: its absence fails the case.
  r = run_on_bare(c, false);
  CHECK(r.result == outcome::fail);
  CHECK(r.message ==
        "needs cuMemAllocAsync: the driver reports CUDA 13.0, which has it since 11.2, but it is "
        "missing (no cuMemAllocAsync here)");
  // A binding that does not bind it (a captured package's map): not supported, named.
  r = run_on_bare(c, true);
  CHECK(r.result == outcome::not_supported);
  CHECK(r.message == "needs cuMemAllocAsync: the binding under test does not bind it (no "
                     "cuMemAllocAsync here)");
  CHECK_FALSE(ran);
}

TEST_CASE("requirements: a stand-in meets a need; the message names both when neither is bound",
          "[requirements]") {
  case_def c{"alloc.req.stand_in", "either", [](case_context &) {}};
  c.uses({entry_need{{E::cuMemAllocAsync}, {E::cuMemAlloc}}});
  CHECK(run_on_sim(c, {}, CUPARITY_SIMDRIVER_LEGACY).result == outcome::pass);
  // Any one alternative is enough, the first as much as the last.
  case_def first{"alloc.req.first_bound", "the preferred one", [](case_context &) {}};
  first.uses({entry_need{{E::cuMemAlloc}, {E::cuMemAllocAsync}}});
  CHECK(run_on_sim(first, {}, CUPARITY_SIMDRIVER_LEGACY).result == outcome::pass);
  case_def middle{"alloc.req.middle_bound", "the second of three", [](case_context &) {}};
  middle.uses({entry_need{{E::cuMemAllocAsync}, {E::cuMemAlloc}, {E::cuMemFreeAsync}}});
  CHECK(run_on_sim(middle, {}, CUPARITY_SIMDRIVER_LEGACY).result == outcome::pass);
  case_def none{"alloc.req.no_stand_in", "neither", [](case_context &) {}};
  none.uses({entry_need{{E::cuMemAllocAsync}, {E::cuMemFreeAsync}}});
  const auto r = run_on_sim(none, {}, CUPARITY_SIMDRIVER_LEGACY);
  CHECK(r.result == outcome::not_supported);
  CHECK_THAT(r.message, Catch::EndsWith("; nor is its stand-in cuMemFreeAsync"));
}

TEST_CASE("requirements: CUDA_ERROR_NOT_SUPPORTED from a met requirement fails the case",
          "[requirements]") {
  case_def c{"launch.req.refused", "the driver refuses",
             [](case_context &ctx) { ctx.drv().cuLaunchKernel.fail(CUDA_ERROR_NOT_SUPPORTED); }};
  c.uses({E::cuLaunchKernel});
  const auto r = run_on_sim(c);
  CHECK(r.result == outcome::fail);
  CHECK_THAT(r.message, Catch::Contains("cuLaunchKernel"));
  CHECK_THAT(r.message, Catch::Contains("requirements held"));
}

TEST_CASE("requirements: a failed clean-up call fails a passing case and names the call",
          "[requirements]") {
  case_def c{"stream.req.cleanup", "destroys a bogus stream", [](case_context &ctx) {
               ctx.drv().cuInit(0);
               // A clean-up call never throws; its failure is kept for the case.
               ctx.drv().cuStreamDestroy.cleanup(reinterpret_cast<CUstream>(0x10));
             }};
  c.uses({E::cuInit, E::cuStreamDestroy});
  const auto r = run_on_sim(c);
  CHECK(r.result == outcome::fail);
  CHECK_THAT(r.message, Catch::Contains("clean-up failed: cuStreamDestroy"));
}

TEST_CASE("requirements: list text names alternatives, devices, attributes and facilities",
          "[requirements]") {
  case_def c{"alloc.req.text", "text", [](case_context &) {}};
  c.uses({E::cuInit, entry_need{{E::cuCtxSetCurrent}, {E::cuCtxPushCurrent, E::cuCtxPopCurrent}}})
      .needs_devices(2)
      .needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1))
      .needs_facility({"NVRTC", {}});
  CHECK(c.needs.describe() ==
        std::vector<std::string>{"cuInit", "cuCtxSetCurrent | cuCtxPushCurrent+cuCtxPopCurrent",
                                 "2 devices", "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY", "NVRTC"});
  const entry_set declared = c.needs.declared();
  CHECK(declared.count() == 4);
  CHECK(declared.test(static_cast<std::size_t>(E::cuCtxPopCurrent)));
}
