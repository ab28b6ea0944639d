// Identifiers and static facts (name, ABI version) of the driver entries (entries.list).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace cuparity {

enum class entry_id : unsigned {
#define CUPARITY_ENTRY(name, abi, params) name,
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY
};

struct entry_info {
  entry_id id;
  std::string_view name; ///< base name, as cuGetProcAddress takes it
  int abi_version;       ///< cuGetProcAddress version of the ABI we call
  /// Version from which its per-thread (_ptds/_ptsz) variant exists; 0 when it has none.
  int per_thread_version = 0;

  /// The version to ask cuGetProcAddress for, with or without the per-thread flag.
  [[nodiscard]] int query_version(bool per_thread) const noexcept {
    return per_thread && per_thread_version > abi_version ? per_thread_version : abi_version;
  }
};

inline constexpr std::size_t entry_count = 0
#define CUPARITY_ENTRY(name, abi, params) +1
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY
    ;

/// Every entry, in table order (index == static_cast<size_t>(id)).
[[nodiscard]] std::span<const entry_info> all_entries() noexcept;
[[nodiscard]] const entry_info &info(entry_id id) noexcept;
[[nodiscard]] std::optional<entry_id> find_entry(std::string_view base_name) noexcept;

} // namespace cuparity
