// The whole driver API table (harness/driver/driver_api.hpp): lookups by name and by symbol.
#include "harness/driver/driver_api.hpp"
#include "harness/driver/entry.hpp"

#include <catch2/catch.hpp>
#include <cuda.h>
#include <string>

using namespace cuparity;

TEST_CASE("driver_api: a function's ABIs, numbered as the driver exports them", "[driver_api]") {
  const api_function *alloc = find_api_function("cuMemAlloc");
  REQUIRE(alloc != nullptr);
  REQUIRE(alloc->abis.size() == 2);
  CHECK(alloc->abis[0].version == 2000);
  CHECK(alloc->abis[0].symbol == "cuMemAlloc");
  CHECK(alloc->abis[0].parameters == "CUdeviceptr_v1 *, unsigned int");
  CHECK(alloc->abis[1].version == 3020);
  CHECK(alloc->abis[1].symbol == "cuMemAlloc_v2");
  CHECK(alloc->newest().symbol == "cuMemAlloc_v2");
  CHECK(alloc->declared_in == api_header_versions().front());

  const api_function *create = find_api_function("cuCtxCreate");
  REQUIRE(create != nullptr);
  REQUIRE(create->abis.size() == 4); // 2000, 3020, 11040, 12050: cuda.h's cuCtxCreate_v4
  CHECK(create->newest().symbol == "cuCtxCreate_v4");
  CHECK(create->newest().version == 12050);
}

TEST_CASE("driver_api: the newest ABI at a version", "[driver_api]") {
  const api_function *alloc = find_api_function("cuMemAlloc");
  REQUIRE(alloc != nullptr);
  CHECK(alloc->at_version(1000) == nullptr);
  REQUIRE(alloc->at_version(2000) != nullptr);
  CHECK(alloc->at_version(3019)->version == 2000);
  CHECK(alloc->at_version(3020)->version == 3020);
  CHECK(alloc->at_version(13000)->version == 3020);
}

TEST_CASE("driver_api: per-thread variants belong to the newest ABI at their version",
          "[driver_api]") {
  const api_function *htod = find_api_function("cuMemcpyHtoD");
  REQUIRE(htod != nullptr);
  CHECK(htod->abis[0].per_thread_symbol.empty()); // the 32-bit 2000 ABI has none
  CHECK(htod->abis[0].per_thread_version == 0);
  CHECK(htod->newest().per_thread_symbol == "cuMemcpyHtoD_v2_ptds");
  CHECK(htod->newest().per_thread_version == 7000);

  // Both of cuStreamGetCtx's ABIs have their own _ptsz.
  const api_function *ctx = find_api_function("cuStreamGetCtx");
  REQUIRE(ctx != nullptr);
  REQUIRE(ctx->abis.size() == 2);
  CHECK(ctx->abis[0].per_thread_symbol == "cuStreamGetCtx_ptsz");
  CHECK(ctx->abis[1].per_thread_symbol == "cuStreamGetCtx_v2_ptsz");
  CHECK(ctx->abis[1].per_thread_version == 12050);
}

TEST_CASE("driver_api: an exported symbol names its function, ABI and variant", "[driver_api]") {
  const auto pt = find_api_symbol("cuMemcpyHtoD_v2_ptds");
  REQUIRE(pt.has_value());
  CHECK(pt->function->name == "cuMemcpyHtoD");
  CHECK(pt->abi->version == 3020);
  CHECK(pt->per_thread);

  const auto bare = find_api_symbol("cuMemcpyHtoD");
  REQUIRE(bare.has_value());
  CHECK(bare->abi->version == 2000);
  CHECK_FALSE(bare->per_thread);

  CHECK_FALSE(find_api_symbol("cuMemAlloc_v3").has_value());
  CHECK_FALSE(find_api_symbol("cuMemAlloc_ptds").has_value());
  CHECK_FALSE(find_api_symbol("").has_value());
  CHECK_FALSE(find_api_symbol("zzz").has_value());
  CHECK(find_api_function("cuMemAlloc_v2") == nullptr); // a symbol, not a base name
  CHECK(find_api_function("cuNoSuchFunction") == nullptr);
  CHECK(find_api_function("") == nullptr);
}

TEST_CASE("driver_api: every symbol of the table finds its own row", "[driver_api]") {
  std::size_t symbols = 0;
  std::string previous;
  for (const api_function &function : all_api_functions()) {
    CHECK(std::string(function.name) > previous); // sorted, no repeats
    previous = std::string(function.name);
    CHECK(find_api_function(function.name) == &function);
    REQUIRE_FALSE(function.abis.empty());
    for (const api_abi &abi : function.abis) {
      const auto found = find_api_symbol(abi.symbol);
      REQUIRE(found.has_value());
      CHECK((found->function == &function && found->abi == &abi && !found->per_thread));
      ++symbols;
      if (abi.per_thread_symbol.empty())
        continue;
      const auto twin = find_api_symbol(abi.per_thread_symbol);
      REQUIRE(twin.has_value());
      CHECK((twin->function == &function && twin->abi == &abi && twin->per_thread));
      ++symbols;
    }
  }
  CHECK(all_api_functions().size() > 450); // CUDA 13.0's headers give 479 functions
  CHECK(symbols > all_api_functions().size());
}

TEST_CASE("driver_api: the backends' entries agree with the whole table", "[driver_api]") {
  for (const entry_info &entry : all_entries()) {
    INFO(entry.name);
    const api_function *function = find_api_function(entry.name);
    REQUIRE(function != nullptr);
    const api_abi *abi = function->at_version(entry.abi_version);
    REQUIRE(abi != nullptr);
    CHECK(abi->version == entry.abi_version);
    CHECK(abi->per_thread_version == entry.per_thread_version);
  }
}

TEST_CASE("driver_api: the header sets, oldest first, start at the toolkit's", "[driver_api]") {
  const auto versions = api_header_versions();
  REQUIRE_FALSE(versions.empty());
  CHECK(versions.front() == CUDA_VERSION);
  CHECK(api_headers_version() == versions.back());
  for (std::size_t i = 1; i < versions.size(); ++i)
    CHECK(versions[i - 1] <= versions[i]);
}
