// The entry table's static facts, and the build-time check of every prototype against
// cudaTypedefs.h.
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/entry.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

namespace cuparity {

// A declared prototype that differs from the toolkit's PFN for that ABI version fails the build
// here. This is the check Numba's ctypes table never had (its occupancy prototypes were wrong).
#define CUPARITY_ENTRY(name, abi, params)                                                          \
  static_assert(std::is_same_v<CUresult(CUDAAPI *) params, PFN_##name##_v##abi>,                   \
                #name ": the declared parameters do not match PFN_" #name "_v" #abi);
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY

namespace detail {
template <entry_id> struct pfn_holder;
#define CUPARITY_ENTRY(name, abi, params)                                                          \
  template <> struct pfn_holder<entry_id::name> { using type = PFN_##name##_v##abi; };
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY
template <entry_id Id> using pfn_of = typename pfn_holder<Id>::type;
} // namespace detail

// A per-thread variant must have the entry's own signature.
#define CUPARITY_PER_THREAD(name, version, suffix)                                                 \
  static_assert(                                                                                   \
      std::is_same_v<PFN_##name##_v##version##_##suffix, detail::pfn_of<entry_id::name>>,          \
      #name ": the per-thread variant's PFN differs from the entry's");
#include "harness/driver/per_thread_entries.inl"
#undef CUPARITY_PER_THREAD

namespace {

constexpr int per_thread_version_of(std::string_view name) {
#define CUPARITY_PER_THREAD(base, version, suffix)                                                 \
  if (name == #base)                                                                               \
    return version;
#include "harness/driver/per_thread_entries.inl"
#undef CUPARITY_PER_THREAD
  return 0;
}

constexpr std::array<entry_info, entry_count> table{{
#define CUPARITY_ENTRY(name, abi, params)                                                          \
  {entry_id::name, #name, abi, per_thread_version_of(#name)},
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY
}};

} // namespace

std::span<const entry_info> all_entries() noexcept {
  return table;
}

const entry_info &info(entry_id id) noexcept {
  return table[static_cast<std::size_t>(id)];
}

std::optional<entry_id> find_entry(std::string_view base_name) noexcept {
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const entry_info &e) { return e.name == base_name; });
  if (it == table.end())
    return std::nullopt;
  return it->id;
}

} // namespace cuparity
