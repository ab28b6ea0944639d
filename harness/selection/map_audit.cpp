// Audit of a captured binding map: each function the package bound, against what the driver
// under test answers through cuGetProcAddress_v2 for the stream-0 mode the package should have
// chosen, and against the symbol cuparity's own probing would bind.
#include "harness/selection/map_audit.hpp"

#include "backends/internal/probe_rules.hpp"
#include "harness/config/python_int.hpp"
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/entry.hpp"
#include "harness/protocol/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace cuparity {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string &path, const std::string &member,
                      const std::string &problem) {
  throw map_error(path + ": " + member + ": " + problem);
}

std::string string_member(const std::string &path, const json &o, const std::string &where,
                          const char *key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_string())
    bad(path, where + key, "expected a string");
  return it->get<std::string>();
}

std::optional<std::string> nullable_string(const std::string &path, const json &o,
                                           const std::string &where, const char *key) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null())
    return std::nullopt;
  if (!it->is_string())
    bad(path, where + key, "expected a string or null");
  return it->get<std::string>();
}

const json &object_member(const std::string &path, const json &o, const char *key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_object())
    bad(path, key, "expected an object");
  return *it;
}

captured_entry read_entry(const std::string &path, const json &e, std::size_t i) {
  const std::string where = "entries[" + std::to_string(i) + "].";
  if (!e.is_object())
    bad(path, "entries[" + std::to_string(i) + "]", "expected an object");
  return {string_member(path, e, where, "function"), string_member(path, e, where, "raw_name"),
          nullable_string(path, e, where, "symbol"), nullable_string(path, e, where, "library")};
}

bool per_thread_symbol(const std::string &s) {
  return s.ends_with("_ptds") || s.ends_with("_ptsz");
}

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
  for (const auto &c : probe_rules::numba().candidates(base, ptds))
    if (lib.symbol(c.c_str()))
      return c;
  return {};
}

map_finding judge_entry(const captured_entry &c, gpa_fn gpa, const driver_library &lib,
                        const ptds_expectation &ptds) {
  map_finding f;
  f.function = c.function;
  f.raw_name = c.raw_name;
  f.captured = c.symbol.value_or("");
  const auto id = find_entry(c.function);
  if (!id) {
    f.kind = finding_kind::unknown;
    f.message = c.function + ": not in cuparity's entry table; not checked";
    return f;
  }
  f.driver = driver_answer(gpa, info(*id), ptds.per_thread);
  f.internal = internal_choice(lib, c.function, ptds.per_thread);
  const std::string mode = ptds.per_thread ? "per-thread" : "legacy";
  if (!c.symbol) {
    f.kind = finding_kind::missing;
    f.message = c.raw_name + ": the package holds no pointer (the driver answers " +
                (f.driver.empty() ? "nothing" : f.driver) + ")";
  } else if (!variant_of(f.captured, c.function)) {
    // Checked before anything else: binding another function is wrong whatever the driver says.
    f.kind = finding_kind::wrong_function;
    f.message = c.raw_name + ": bound " + f.captured + ", which is no variant of " + c.function;
  } else if (f.captured == f.driver) {
    f.kind = finding_kind::same;
  } else if (f.driver.empty()) {
    f.kind = finding_kind::no_answer;
    f.message = c.raw_name + ": bound " + f.captured + ", the driver answers nothing";
  } else if (per_thread_symbol(f.captured) != per_thread_symbol(f.driver)) {
    f.kind = finding_kind::per_thread_wrong;
    f.message = c.raw_name + ": bound the " +
                (per_thread_symbol(f.captured) ? "per-thread " : "legacy ") + f.captured +
                " where " + ptds.why + " selects " + mode + " (the driver answers " + f.driver +
                ")";
  } else {
    f.kind = finding_kind::abi_difference;
    f.message = c.raw_name + ": the package binds " + f.captured + ", cuparity binds " + f.driver +
                " (ABI " + std::to_string(info(*id).abi_version) + "): another ABI of " +
                c.function;
  }
  return f;
}

std::string canonical(const std::string &p) {
  std::error_code ec;
  const auto c = std::filesystem::canonical(p, ec);
  return ec ? p : c.string();
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
  }
  return "?";
}

captured_map read_captured_map(const std::string &path) {
  json j;
  try {
    j = read_json_file(
        path); // a regular file, bounded: a FIFO never blocks, deep JSON never crashes
  } catch (const bad_input_error &e) {
    throw map_error(e.what());
  }
  if (!j.is_object())
    throw map_error(path + ": not a JSON object");
  if (string_member(path, j, "", "schema") != "cuparity.binding_map/1")
    bad(path, "schema", "expected \"cuparity.binding_map/1\"");
  captured_map m;
  m.path = path;
  const json &package = object_member(path, j, "package");
  m.kind = string_member(path, package, "package.", "kind");
  if (m.kind != "cuda.bindings" && m.kind != "numba")
    bad(path, "package.kind", "expected \"cuda.bindings\" or \"numba\", not \"" + m.kind + "\"");
  m.name = nullable_string(path, package, "package.", "name").value_or("");
  m.version = nullable_string(path, package, "package.", "version").value_or("");
  for (const auto &[k, v] : object_member(path, j, "environment").items())
    m.environment[k] = nullable_string(path, j["environment"], "environment.", k.c_str());
  m.status = string_member(path, j, "", "status");
  if (m.status != "ok" && m.status != "import_failed" && m.status != "load_failed")
    bad(path, "status", "expected ok, import_failed or load_failed, not \"" + m.status + "\"");
  m.error = string_member(path, j, "", "error");
  const auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array())
    bad(path, "entries", "expected an array");
  for (std::size_t i = 0; i < entries->size(); ++i)
    m.entries.push_back(read_entry(path, (*entries)[i], i));
  return m;
}

ptds_expectation expected_ptds(const captured_map &m) {
  const std::string var = m.kind == "numba" ? "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM"
                                            : "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM";
  ptds_expectation e;
  const auto it = m.environment.find(var);
  if (it == m.environment.end() || !it->second) {
    e.why = var + " unset";
    return e;
  }
  e.why = var + "=\"" + *it->second + "\"";
  const auto n = parse_python_int(*it->second);
  if (!n) {
    // cuda.bindings reads it with int() (NVIDIA/cuda-python#2076): a non-integer is refused.
    // Numba's _readenv warns and keeps the default, off.
    e.value_refused = m.kind == "cuda.bindings";
    return e;
  }
  e.per_thread = *n != 0;
  return e;
}

map_audit_report audit_captured_map(const captured_map &m, const driver_library &lib) {
  map_audit_report r;
  r.ptds = expected_ptds(m);
  r.driver_path = lib.resolved_path().empty() ? lib.path() : lib.resolved_path();
  if (m.status != "ok") {
    r.not_audited = "the package did not load (" + m.status + "): " + m.error;
    // A value the package must refuse, refused: what it should do, not a failure.
    return r;
  }
  if (r.ptds.value_refused) {
    r.failed = true;
    r.notes.push_back("the package loaded although " + r.ptds.why +
                      " is not an integer, which its documented semantics refuse");
  }
  auto gpa = reinterpret_cast<gpa_fn>(lib.symbol("cuGetProcAddress_v2"));
  if (!gpa) {
    r.not_audited = "the driver under test does not export cuGetProcAddress_v2";
    return r;
  }
  r.audited = true;
  const std::string driver_file = canonical(r.driver_path);
  std::set<std::string> elsewhere; // libraries other than the driver under test
  for (const auto &e : m.entries) {
    map_finding f = judge_entry(e, gpa, lib, r.ptds);
    r.failed = r.failed || f.kind == finding_kind::per_thread_wrong ||
               f.kind == finding_kind::wrong_function;
    ++r.counts[f.kind];
    if (e.library && canonical(*e.library) != driver_file && elsewhere.insert(*e.library).second)
      r.notes.push_back("pointers of the capture lay in " + *e.library + ", not in the driver " +
                        "under test (" + driver_file + "): symbols are compared by name");
    r.findings.push_back(std::move(f));
  }
  return r;
}

} // namespace cuparity
