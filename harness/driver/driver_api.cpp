// The whole driver API table (driver_api.inl, generated from the header sets) and its lookups.
#include "harness/driver/driver_api.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace cuparity {

// Named, not anonymous: a unity batch shares one anonymous namespace between files.
namespace driver_api_table {

constexpr int header_versions[] = {
#define CUPARITY_API_HEADER_SET(version, folder) version,
#include "harness/driver/driver_api.inl"
};

constexpr api_abi abis[] = {
#define CUPARITY_API_ABI(name, version, symbol, parameters, pt_version, pt_symbol)                 \
  {version, #symbol, parameters, pt_version, #pt_symbol},
#include "harness/driver/driver_api.inl"
};

// The function each ABI row belongs to, row for row with `abis`.
constexpr std::string_view abi_owner[] = {
#define CUPARITY_API_ABI(name, version, symbol, parameters, pt_version, pt_symbol) #name,
#include "harness/driver/driver_api.inl"
};

struct function_row {
  std::string_view name;
  int declared_in;
};

constexpr function_row function_rows[] = {
#define CUPARITY_API_FUNCTION(name, declared_in) {#name, declared_in},
#include "harness/driver/driver_api.inl"
};

constexpr std::size_t function_count = std::size(function_rows);
constexpr std::size_t abi_count = std::size(abis);

// Each function's ABIs are the rows after it in the list, up to the next function.
constexpr auto functions = [] {
  std::array<api_function, function_count> out{};
  std::size_t next = 0;
  for (std::size_t i = 0; i < function_count; ++i) {
    const std::size_t first = next;
    while (next < abi_count && abi_owner[next] == function_rows[i].name)
      ++next;
    out[i] =
        api_function{function_rows[i].name, std::span<const api_abi>(abis + first, next - first),
                     function_rows[i].declared_in};
  }
  return out;
}();

constexpr bool by_name(const api_function &a, const api_function &b) {
  return a.name < b.name;
}
static_assert(std::is_sorted(functions.begin(), functions.end(), by_name),
              "driver_api.inl: the functions must be sorted by name (binary search)");
static_assert(std::all_of(functions.begin(), functions.end(),
                          [](const api_function &f) { return !f.abis.empty(); }),
              "driver_api.inl: every function has at least one ABI, listed after it");

struct symbol_row {
  std::string_view symbol;
  std::uint16_t function;
  std::uint16_t abi; // index into the function's ABIs
  bool per_thread;
};

constexpr std::size_t symbol_count = [] {
  std::size_t n = 0;
  for (const api_abi &abi : abis)
    n += abi.per_thread_symbol.empty() ? 1 : 2;
  return n;
}();

// Every exported symbol, sorted: built and sorted at compile time.
constexpr auto symbols = [] {
  std::array<symbol_row, symbol_count> out{};
  std::size_t n = 0;
  for (std::size_t f = 0; f < function_count; ++f)
    for (std::size_t a = 0; a < functions[f].abis.size(); ++a) {
      const api_abi &abi = functions[f].abis[a];
      out[n++] = {abi.symbol, static_cast<std::uint16_t>(f), static_cast<std::uint16_t>(a), false};
      if (!abi.per_thread_symbol.empty())
        out[n++] = {abi.per_thread_symbol, static_cast<std::uint16_t>(f),
                    static_cast<std::uint16_t>(a), true};
    }
  std::sort(out.begin(), out.end(),
            [](const symbol_row &a, const symbol_row &b) { return a.symbol < b.symbol; });
  return out;
}();
static_assert(std::adjacent_find(symbols.begin(), symbols.end(),
                                 [](const symbol_row &a, const symbol_row &b) {
                                   return a.symbol == b.symbol;
                                 }) == symbols.end(),
              "driver_api.inl: two ABIs share an exported symbol");

} // namespace driver_api_table

using namespace driver_api_table;

const api_abi *api_function::at_version(int version) const noexcept {
  for (auto it = abis.rbegin(); it != abis.rend(); ++it)
    if (it->version <= version)
      return &*it;
  return nullptr;
}

std::span<const api_function> all_api_functions() noexcept {
  return functions;
}

const api_function *find_api_function(std::string_view base_name) noexcept {
  const auto it =
      std::lower_bound(functions.begin(), functions.end(), base_name,
                       [](const api_function &f, std::string_view name) { return f.name < name; });
  return it != functions.end() && it->name == base_name ? &*it : nullptr;
}

std::optional<api_symbol> find_api_symbol(std::string_view symbol) noexcept {
  const auto it = std::lower_bound(
      symbols.begin(), symbols.end(), symbol,
      [](const symbol_row &row, std::string_view name) { return row.symbol < name; });
  if (it == symbols.end() || it->symbol != symbol)
    return std::nullopt;
  const api_function &function = functions[it->function];
  return api_symbol{&function, &function.abis[it->abi], it->per_thread};
}

int api_headers_version() noexcept {
  return header_versions[std::size(header_versions) - 1];
}

std::span<const int> api_header_versions() noexcept {
  return header_versions;
}

} // namespace cuparity
