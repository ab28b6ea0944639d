// The older-ABI table and its build-time check against cudaTypedefs.h's older typedefs.
//
// cudaTypedefs.h declares the PFN types of superseded ABIs only under __CUDA_API_VERSION_INTERNAL,
// which also turns off cuda.h's renaming macros (cuCtxPushCurrent -> cuCtxPushCurrent_v2). So
// this file includes the toolkit headers itself, never cuparity's cuda_api.hpp, and is compiled
// outside the unity batches (CMakeLists.txt), where the macro would leak into its neighbours.
#define __CUDA_API_VERSION_INTERNAL 1
#include "harness/driver/older_abi.hpp"

#include <cudaTypedefs.h>
#include <type_traits>

namespace cuparity {
namespace {

#define CUPARITY_OLDER_ABI(name, older, abi)                                                       \
  static_assert(std::is_same_v<PFN_##name##_v##older, PFN_##name##_v##abi>,                        \
                #name ": the " #older " ABI's signature differs from the " #abi " ABI's");
#include "harness/driver/older_abis.inl"
#undef CUPARITY_OLDER_ABI

struct older_abi {
  entry_id id;
  std::string_view symbol;
  int version;
  int entry_abi;
};

constexpr older_abi k_older[] = {
#define CUPARITY_OLDER_ABI(name, older, abi) {entry_id::name, #name, older, abi},
#include "harness/driver/older_abis.inl"
#undef CUPARITY_OLDER_ABI
};

constexpr int abi_of(entry_id id) {
#define CUPARITY_ENTRY(name, abi, params)                                                          \
  if (id == entry_id::name)                                                                        \
    return abi;
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY
  return -1;
}

constexpr bool abis_agree() {
  for (const auto &o : k_older)
    if (abi_of(o.id) != o.entry_abi || o.version >= o.entry_abi)
      return false;
  return true;
}
static_assert(abis_agree(), "older_abis.inl: an entry ABI differs from entries.inl's, or an "
                            "\"older\" version is not older");

} // namespace

std::optional<int> older_abi_version(entry_id id, std::string_view symbol) noexcept {
  for (const auto &o : k_older)
    if (o.id == id && o.symbol == symbol)
      return o.version;
  return std::nullopt;
}

} // namespace cuparity
