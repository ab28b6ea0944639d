// The fault-spec grammar of CUPARITY_SIM_FAULTS and CUPARITY_SHIM_FAULTS, and its one parser.
#pragma once

#include "tools/faults/exported_symbol.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity::faults {

/// How the caller found the function: `dlsym` (the exported symbol), `proc` (a pointer handed out
/// by cuGetProcAddress), or `any` of the two (only in a spec, never as a call's path).
enum class call_path : std::uint8_t { any, dlsym, proc };

enum class fault_kind : std::uint8_t {
  error,    ///< return `value` and do nothing
  delay_ns, ///< wait `value` ns on the caller, then run normally
  corrupt,  ///< run, then damage what the call wrote (what exactly is up to the library)
  crash,    ///< raise SIGSEGV inside the call: a driver dying mid-call
  legacy    ///< a per-thread (_ptds/_ptsz) symbol acts as its legacy twin: stream 0 is legacy
};

/// The legacy twin of a per-thread symbol ("cuMemcpyHtoDAsync_v2" for
/// "cuMemcpyHtoDAsync_v2_ptsz"); nullopt when `id` is no per-thread symbol or has no twin.
[[nodiscard]] std::optional<symbol_id> legacy_twin(symbol_id id);

/// One item: `<exported symbol>:<kind>[=<value>][@<path>]`.
struct fault_spec {
  symbol_id symbol{};
  fault_kind kind{};
  std::int64_t value = 0;
  call_path path = call_path::any;
};

/// Why a library cannot apply a well-formed fault ("" when it can): the fault shim, for instance,
/// can corrupt only the destination of a copy.
using support_check = std::function<std::string(const fault_spec &)>;
/// Receives one warning sentence (the caller adds its own prefix and newline).
using warning_sink = std::function<void(const std::string &)>;

/// Parses one item; returns the reason when it is malformed ("" when `out` was filled).
[[nodiscard]] std::string parse_fault(std::string_view item, fault_spec &out);

/// Why one item does not apply to a library: malformed, or refused by `supported`; "" when it
/// applies. What a library's cuparity_fault_support answers (tools that plan fault trials).
[[nodiscard]] std::string fault_item_support(std::string_view item, const support_check &supported);

/// Parses a `;`-separated list read from the variable `variable`. A malformed or unsupported item
/// is reported through `warn`, naming the variable and the item, and left out: a typo in a fault
/// list must never stop the process that reads it.
[[nodiscard]] std::vector<fault_spec> parse_fault_list(std::string_view text,
                                                       std::string_view variable,
                                                       const warning_sink &warn,
                                                       const support_check &supported = {});

} // namespace cuparity::faults
