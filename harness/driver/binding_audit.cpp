// binding.resolve.audit's engine: bound address vs cuGetProcAddress_v2's answer, per entry.
#include "harness/driver/binding_audit.hpp"

#include "harness/driver/driver_library.hpp"

#include <algorithm>

namespace cuparity {

std::string mismatch_text(const audit_row &r) {
  auto name = [](const void *address, const std::string &symbol) {
    return !address         ? std::string("nothing")
           : symbol.empty() ? std::string("an unnamed address")
                            : symbol;
  };
  std::string bound = name(r.bound, r.bound_symbol);
  std::string expected = name(r.expected, r.expected_symbol);
  // Same name, other address: a library in front of the driver (a shim) or a second driver
  // loaded beside it; only the files tell the two apart.
  if (r.bound && r.expected && bound == expected) {
    bound += " in " + (r.bound_library.empty() ? "an unknown file" : r.bound_library);
    expected += " in " + (r.expected_library.empty() ? "an unknown file" : r.expected_library);
  }
  return r.entry + " (bound " + bound + ", driver says " + expected + ")";
}

audit_report audit_bindings(driver &d) {
  audit_report report;
  d.resolve_all();
  auto *gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(d.address(entry_id::cuGetProcAddress));
  if (!gpa) {
    report.supported = false;
    const auto map = d.binding_map();
    const bool unbound = std::any_of(map.begin(), map.end(), [](const binding &b) {
      return b.entry == "cuGetProcAddress" && b.not_bound;
    });
    report.not_supported_reason = unbound ? "the binding under test binds no cuGetProcAddress, "
                                            "which the audit asks the driver through"
                                          : "the driver does not export cuGetProcAddress_v2";
    return report;
  }
  const bool ptds = d.get_backend().per_thread_default_stream();
  const cuuint64_t flag =
      ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  report.flag = ptds ? "PER_THREAD_DEFAULT_STREAM" : "LEGACY_STREAM";
  for (const auto &b : d.binding_map()) {
    audit_row row;
    row.entry = b.entry;
    row.abi_version = b.abi_version;
    row.bound = b.address;
    row.bound_symbol = b.symbol;
    void *expected = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    // In PTDS mode a per-thread entry is asked for at the version its _ptds/_ptsz variant has
    // (per_thread_entries.inl); the backends bind the same way. An entry bound at an older ABI of
    // its own signature (the map backend, older_abis.inl) is asked for at that ABI's version:
    // the question is whether the binding holds what the driver gives for the ABI it bound.
    const entry_info &e = info(*find_entry(b.entry));
    const int version = b.abi_version != e.abi_version ? b.abi_version : e.query_version(ptds);
    row.query_result = gpa(b.entry.c_str(), &expected, version, flag, &status);
    row.symbol_status = static_cast<int>(status);
    row.expected = expected;
    row.expected_symbol = symbol_at(expected);
    row.bound_library = library_at(b.address);
    row.expected_library = library_at(expected);
    // The nvidia backend binds cuGetProcAddress_v2 itself through dlsym; asking the driver for
    // "cuGetProcAddress" answers with the same function, so the rule holds for it too.
    row.match = row.bound == row.expected;
    row.not_bound = b.not_bound;
    if (!row.match && !row.not_bound)
      ++report.mismatches;
    report.rows.push_back(std::move(row));
  }
  return report;
}

} // namespace cuparity
