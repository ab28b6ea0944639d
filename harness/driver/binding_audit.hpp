// Compares every bound entry with the driver's own answer from cuGetProcAddress_v2.
#pragma once

#include "harness/driver/driver.hpp"

#include <string>
#include <vector>

namespace cuparity {

struct audit_row {
  std::string entry;
  int abi_version = 0;
  const void *bound = nullptr;
  std::string bound_symbol;
  const void *expected = nullptr;
  std::string expected_symbol;  ///< dladdr name of the driver's answer
  std::string bound_library;    ///< dladdr file of the bound address
  std::string expected_library; ///< dladdr file of the driver's answer
  int query_result = 0;
  int symbol_status = 0;
  bool match = false;
  /// The binding under test does not bind this entry (a captured package): not compared.
  bool not_bound = false;
};

/// What differs in a mismatched row, in words: the names, or, where the names agree, the files
/// the two addresses lie in ("cuX (bound cuX in a.so, driver says cuX in b.so)").
[[nodiscard]] std::string mismatch_text(const audit_row &r);

struct audit_report {
  bool supported = true;
  std::string not_supported_reason;
  std::string flag; ///< LEGACY_STREAM or PER_THREAD_DEFAULT_STREAM
  std::vector<audit_row> rows;
  std::size_t mismatches = 0; ///< rows that differ, not counting entries the binding lacks
};

/// Resolves every entry through `d`, then asks the driver (cuGetProcAddress_v2 with the entry's
/// ABI version and an explicit LEGACY_STREAM or PER_THREAD_DEFAULT_STREAM flag, by the backend's
/// null-stream mode) where each should point. Equal addresses prove both backends call the same
/// driver code. Unsupported when the driver has no cuGetProcAddress_v2.
[[nodiscard]] audit_report audit_bindings(driver &d);

} // namespace cuparity
