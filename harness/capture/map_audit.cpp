// Audit of a captured binding map: each function the package (or process) bound, against the
// stream-0 mode it should have chosen and what the driver under test answers through
// cuGetProcAddress_v2, and against the symbol cuparity's own probing would bind.
#include "harness/capture/map_audit.hpp"

#include "backends/internal/suffix_rules.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/process_findings.hpp"
#include "harness/config/python_int.hpp"
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/entry.hpp"

#include <filesystem>
#include <set>

namespace cuparity {
namespace {

/// Whether `symbol` is one of `function`'s exported variants: the name itself, an ABI version
/// (`_v2`, `_v12000`), a per-thread twin (`_ptds`, `_ptsz`), or both, in that order.
bool variant_of(std::string_view symbol, std::string_view function) {
  if (!symbol.starts_with(function))
    return false;
  std::string_view rest = symbol.substr(function.size());
  if (rest.ends_with("_ptds") || rest.ends_with("_ptsz"))
    rest.remove_suffix(5);
  if (rest.empty())
    return true;
  if (!rest.starts_with("_v") || rest.size() == 2)
    return false;
  return rest.substr(2).find_first_not_of("0123456789") == std::string_view::npos;
}

std::string symbol_name(const void *p) {
  return p ? symbol_at(p) : std::string();
}

using gpa_fn = PFN_cuGetProcAddress_v12000;

/// The driver's answer for one entry of cuparity's table, by name ("" for none).
std::string driver_answer(gpa_fn gpa, const entry_info &e, bool ptds) {
  void *fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const cuuint64_t flag =
      ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  const std::string name(e.name);
  if (gpa(name.c_str(), &fn, e.query_version(ptds), flag, &status) != CUDA_SUCCESS)
    return {};
  return symbol_name(fn);
}

/// What Numba's probing (cuparity's internal backend) binds: the first candidate exported.
std::string internal_choice(const driver_library &lib, std::string_view base, bool ptds) {
  for (const auto &c : suffix_rules::numba().candidates(base, ptds))
    if (lib.symbol(c.c_str()))
      return c;
  return {};
}

std::string mode_of(bool per_thread) {
  return per_thread ? "per-thread" : "legacy";
}

/// A request with the per-thread flag below the version its variant needs gets no pointer
/// (docs/driver-facts.md#per-thread-version): the driver says so, or cuparity's table knows it.
bool per_thread_too_old(const captured_entry &c) {
  if (!c.request || !(c.request->flags & 2u) || c.symbol)
    return false;
  if (c.request->status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
    return true;
  const auto id = find_entry(c.function);
  return id && info(*id).per_thread_version > c.request->version;
}

/// Whether `captured` is in the wrong stream-0 mode for `ptds`. A legacy symbol is wrong only
/// where the driver exports a per-thread twin of it (most functions have none, and the driver
/// answers a per-thread request for them with the legacy symbol).
bool wrong_mode(const std::string &captured, const ptds_expectation &ptds,
                const driver_library &lib) {
  if (!ptds.known || is_per_thread_symbol(captured) == ptds.per_thread)
    return false;
  return !ptds.per_thread || lib.symbol((captured + "_ptds").c_str()) ||
         lib.symbol((captured + "_ptsz").c_str());
}

/// The checks that need no table: no pointer, another function, the wrong stream-0 mode.
bool judge_binding(const captured_entry &c, const ptds_expectation &ptds, const driver_library &lib,
                   bool in_table, map_finding &f) {
  if (per_thread_too_old(c)) {
    f.kind = finding_kind::per_thread_too_old;
    f.message = c.raw_name + ": asked with the per-thread flag at " +
                std::to_string(c.request->version) +
                ", older than its per-thread variant: the driver gave no pointer";
  } else if (!c.symbol) {
    f.kind = finding_kind::missing;
    f.message = c.raw_name + ": the package holds no pointer (the driver answers " +
                (f.driver.empty() ? "nothing" : f.driver) + ")";
  } else if (!variant_of(f.captured, c.function)) {
    // Before anything else: binding another function is wrong whatever the driver says.
    f.kind = finding_kind::wrong_function;
    f.message = c.raw_name + ": bound " + f.captured + ", which is no variant of " + c.function;
  } else if ((!f.driver.empty() || !in_table || c.request) && wrong_mode(f.captured, ptds, lib)) {
    // A table entry the driver has no answer for is no_answer below, whatever its mode.
    f.kind = finding_kind::per_thread_wrong;
    f.message = c.raw_name + ": bound the " + mode_of(is_per_thread_symbol(f.captured)) + " " +
                f.captured + " where " + ptds.why + " selects " + mode_of(ptds.per_thread) +
                (f.driver.empty() ? "" : " (the driver answers " + f.driver + ")");
  } else {
    return false;
  }
  return true;
}

map_finding judge_entry(const captured_entry &c, gpa_fn gpa, const driver_library &lib,
                        const ptds_expectation &ptds, bool package_map) {
  map_finding f;
  f.function = c.function;
  f.raw_name = c.raw_name;
  f.captured = c.symbol.value_or("");
  f.process = c.process;
  f.image = c.image;
  f.source = c.source;
  const auto id = find_entry(c.function);
  if (id && ptds.known) {
    f.driver = driver_answer(gpa, info(*id), ptds.per_thread);
    f.internal = internal_choice(lib, c.function, ptds.per_thread);
  }
  if (!id && package_map) {
    // A package's table holds hundreds of functions cuparity has none of: named, not judged.
    f.kind = finding_kind::unknown;
    f.message = c.function + ": not in cuparity's entry table; not checked";
    return f;
  }
  if (judge_binding(c, ptds, lib, id.has_value(), f))
    return f;
  if (!ptds.known) {
    f.kind = finding_kind::unchecked;
    f.message = c.raw_name + ": bound " + mode_of(is_per_thread_symbol(f.captured)) + " " +
                f.captured + " by " + c.source + "; " + ptds.why + ": not checked";
  } else if (!id) {
    f.kind = finding_kind::unknown;
    f.message = c.function + ": not in cuparity's entry table; not checked";
  } else if (f.captured == f.driver) {
    f.kind = finding_kind::same;
  } else if (f.driver.empty()) {
    f.kind = finding_kind::no_answer;
    f.message = c.raw_name + ": bound " + f.captured + ", the driver answers nothing";
  } else {
    f.kind = finding_kind::abi_difference;
    f.message = c.raw_name + ": bound " + f.captured + ", cuparity binds " + f.driver + " (ABI " +
                std::to_string(info(*id).abi_version) + "): another ABI of " + c.function;
  }
  return f;
}

std::string canonical(const std::string &p) {
  std::error_code ec;
  const auto c = std::filesystem::canonical(p, ec);
  return ec ? p : c.string();
}

void add(map_audit_report &r, map_finding f) {
  r.failed = r.failed || is_failure(f.kind);
  ++r.counts[f.kind];
  r.findings.push_back(std::move(f));
}

void audit_entries(const captured_map &m, gpa_fn gpa, const driver_library &lib,
                   map_audit_report &r) {
  const std::string driver_file = canonical(r.driver_path);
  std::set<std::string> elsewhere; // libraries other than the driver under test
  for (const auto &e : m.entries) {
    const ptds_expectation x = m.schema == 1 ? r.ptds : expectation_for(m, e);
    map_finding f = judge_entry(e, gpa, lib, x, m.schema == 1);
    if (m.schema == 2 && f.kind != finding_kind::same)
      f.message = "pid " + std::to_string(e.process) +
                  (e.image ? " (exec " + std::to_string(e.image) + ")" : std::string()) + ", " +
                  e.source + ": " + f.message;
    if (e.library && canonical(*e.library) != driver_file && elsewhere.insert(*e.library).second)
      r.notes.push_back("pointers of the capture lay in " + *e.library + ", not in the driver " +
                        "under test (" + driver_file + "): symbols are compared by name");
    add(r, std::move(f));
  }
  if (m.schema == 2)
    for (auto &f : process_findings(m))
      add(r, std::move(f));
}

} // namespace

const char *to_string(finding_kind k) noexcept {
  switch (k) {
  case finding_kind::same:
    return "same";
  case finding_kind::per_thread_wrong:
    return "per_thread_wrong";
  case finding_kind::abi_difference:
    return "abi_difference";
  case finding_kind::missing:
    return "missing";
  case finding_kind::unknown:
    return "unknown";
  case finding_kind::wrong_function:
    return "wrong_function";
  case finding_kind::no_answer:
    return "no_answer";
  case finding_kind::per_thread_too_old:
    return "per_thread_too_old";
  case finding_kind::two_abis:
    return "two_abis";
  case finding_kind::both_modes:
    return "both_modes";
  case finding_kind::only_direct:
    return "only_direct";
  case finding_kind::unchecked:
    return "unchecked";
  case finding_kind::abi_behind:
    return "abi_behind";
  case finding_kind::null_entry:
    return "null_entry";
  case finding_kind::old_semantics:
    return "old_semantics";
  case finding_kind::mixed_modes:
    return "mixed_modes";
  case finding_kind::table_disagrees:
    return "table_disagrees";
  }
  return "?";
}

bool is_failure(finding_kind k) noexcept {
  return k == finding_kind::per_thread_wrong || k == finding_kind::wrong_function ||
         k == finding_kind::per_thread_too_old || k == finding_kind::mixed_modes ||
         k == finding_kind::table_disagrees;
}

ptds_expectation expected_ptds(const std::string &kind,
                               const std::map<std::string, std::optional<std::string>> &env) {
  const std::string var = kind == "numba" ? "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM"
                                          : "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM";
  ptds_expectation e;
  const auto it = env.find(var);
  if (it == env.end() || !it->second) {
    e.why = var + " unset";
    return e;
  }
  e.why = var + "=\"" + *it->second + "\"";
  const auto n = parse_python_int(*it->second);
  if (!n) {
    // cuda.bindings reads it with int() (NVIDIA/cuda-python#2076): a non-integer is refused.
    // Numba's _readenv warns and keeps the default, off.
    e.value_refused = kind == "cuda.bindings";
    return e;
  }
  e.per_thread = *n != 0;
  return e;
}

ptds_expectation expected_ptds(const captured_map &m) {
  return expected_ptds(m.kind, m.environment);
}

map_audit_report audit_captured_map(const captured_map &m, const driver_library &lib) {
  map_audit_report r;
  r.ptds = m.schema == 1 ? expected_ptds(m) : ptds_expectation{false, false, false, ""};
  r.driver_path = lib.resolved_path().empty() ? lib.path() : lib.resolved_path();
  if (m.status != "ok") {
    r.not_audited = m.schema == 1
                        ? "the package did not load (" + m.status + "): " + m.error
                        : m.status + ": " + (m.error.empty() ? "(no reason given)" : m.error);
    // A value the package must refuse, refused: what it should do, not a failure; yet no
    // binding was checked, so not a pass either.
    return r;
  }
  if (r.ptds.value_refused) {
    r.failed = true;
    r.notes.push_back("the package loaded although " + r.ptds.why +
                      " is not an integer, which its documented semantics refuse");
  }
  if (m.entries.empty()) {
    r.not_audited = "the map holds no entries: there is nothing to check";
    return r;
  }
  auto gpa = reinterpret_cast<gpa_fn>(lib.symbol("cuGetProcAddress_v2"));
  if (!gpa) {
    r.not_audited = "the driver under test does not export cuGetProcAddress_v2";
    return r;
  }
  r.audited = true;
  audit_entries(m, gpa, lib, r);
  return r;
}

} // namespace cuparity
