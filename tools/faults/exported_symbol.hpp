// Ids and names of the driver symbols the simulated driver and the fault shim export.
#pragma once

// No cuda.h here on purpose: a library that defines the cu* functions must include cuda.h first
// itself, inside its own `visibility push(default)`, or its definitions would come out hidden.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuparity::faults {

// One id per line of harness/driver/exported_symbols.inl (generated from entries.list), in order.
enum class symbol_id : std::uint16_t {
#define CUPARITY_EXPORTED_SYMBOL(sym) sym,
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
  count_
};
inline constexpr std::size_t symbol_count = static_cast<std::size_t>(symbol_id::count_);

constexpr std::size_t index_of(symbol_id id) {
  return static_cast<std::size_t>(id);
}

/// The exported name of a symbol ("cuMemcpyDtoH_v2").
[[nodiscard]] std::string_view symbol_name(symbol_id id);
/// The id of an exported name; nullopt when the list does not have it.
[[nodiscard]] std::optional<symbol_id> find_symbol(std::string_view name);

} // namespace cuparity::faults
