// The name table behind symbol_name and find_symbol.
#include "tools/faults/exported_symbol.hpp"

#include <array>

namespace cuparity::faults {

namespace {
constexpr std::array<std::string_view, symbol_count> names = {
#define CUPARITY_EXPORTED_SYMBOL(sym) #sym,
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
};
} // namespace

std::string_view symbol_name(symbol_id id) {
  return names[index_of(id)];
}

std::optional<symbol_id> find_symbol(std::string_view name) {
  // A linear scan: it runs only while a fault list is parsed, over some 160 names.
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<symbol_id>(i);
  return std::nullopt;
}

} // namespace cuparity::faults
