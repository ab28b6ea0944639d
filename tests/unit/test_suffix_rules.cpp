// The internal backend's probe order and pins, as data.
#include "backends/internal/suffix_rules.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using names = std::vector<std::string>;

TEST_CASE("Numba's probe order with and without PTDS", "[probe]") {
  auto r = suffix_rules::numba();
  CHECK(r.candidates("cuLaunchKernel", true) ==
        names{"cuLaunchKernel_v2_ptds", "cuLaunchKernel_v2_ptsz", "cuLaunchKernel_ptds",
              "cuLaunchKernel_ptsz", "cuLaunchKernel_v2", "cuLaunchKernel"});
  CHECK(r.candidates("cuMemAlloc", false) == names{"cuMemAlloc_v2", "cuMemAlloc"});
}

TEST_CASE("the pins bind the bare symbol in both modes", "[probe]") {
  auto r = suffix_rules::numba();
  for (bool ptds : {false, true}) {
    CHECK(r.candidates("cuCtxGetDevice", ptds) == names{"cuCtxGetDevice"});
    CHECK(r.candidates("cuCtxSynchronize", ptds) == names{"cuCtxSynchronize"});
  }
  r.pinned.clear();
  CHECK(r.candidates("cuCtxSynchronize", false) ==
        names{"cuCtxSynchronize_v2", "cuCtxSynchronize"});
}
