// Audit of a captured binding map: each function the package (or process) bound, against the
// stream-0 mode it should have chosen, the whole driver API table of the toolkit's headers
// (harness/driver/driver_api.hpp: the ABI due at the version asked, the newest ABI, the first
// one), what the driver under test answers through cuGetProcAddress_v2, and the symbol cuparity's
// own probing would bind.
#include "harness/capture/map_audit.hpp"

#include "backends/internal/suffix_rules.hpp"
#include "harness/capture/api_expectation.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/process_findings.hpp"
#include "harness/capture/table_check.hpp"
#include "harness/config/python_int.hpp"
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/entry.hpp"

#include <algorithm>
#include <climits>
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

/// What every entry is judged with.
struct audit_context {
  const driver_library &lib;
  gpa_fn gpa = nullptr;
  long long under_test = 0; ///< the driver under test's cuDriverGetVersion (0: unknown)
  long long captured = 0;   ///< the version of the driver that answered the capture (/2), else
                            ///< the driver under test's
};

/// The driver under test's answer to one request, by name ("" for none).
std::string driver_answer(gpa_fn gpa, const std::string &function, long long version,
                          std::uint64_t flags) {
  if (version < INT_MIN || version > INT_MAX)
    return {};
  void *fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (gpa(function.c_str(), &fn, static_cast<int>(version), flags, &status) != CUDA_SUCCESS)
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

std::string request_text(const proc_request &q) {
  return "asked at " + std::to_string(q.version) + " (flags " + std::to_string(q.flags) + ")";
}

/// The table's answer and the driver's, for a request as asked, else for the function's newest
/// ABI in the expected mode (legacy where none is known) that the driver has.
void ask(const captured_entry &c, const api_function &fn, const ptds_expectation &x,
         const audit_context &ctx, map_finding &f) {
  if (c.request) {
    f.expected = expected_symbol(fn, c.request->version, (c.request->flags & 2u) != 0);
    f.driver = driver_answer(ctx.gpa, c.function, c.request->version, c.request->flags);
    return;
  }
  const bool pt = x.known && x.per_thread;
  f.expected = expected_symbol(fn, newest_query_version(fn, pt, ctx.captured), pt);
  f.driver = driver_answer(ctx.gpa, c.function, newest_query_version(fn, pt, ctx.under_test),
                           pt ? 2u : 1u);
}

/// A request with the per-thread flag below the version its variant needs gets no pointer
/// (docs/driver-facts.md#per-thread-version): the table knows it, or for a function the headers do
/// not declare, the driver's status says so.
bool per_thread_too_old(const captured_entry &c, const api_function *fn) {
  if (!c.request || !(c.request->flags & 2u) || c.symbol)
    return false;
  if (!fn)
    return c.request->status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
  const api_abi *abi =
      fn->at_version(static_cast<int>(std::clamp<long long>(c.request->version, INT_MIN, INT_MAX)));
  return abi && abi->per_thread_version > c.request->version;
}

/// Whether `s` is in the wrong stream-0 mode for `x`: a per-thread variant where legacy is due, or
/// a bare symbol where per-thread is due and its ABI has a per-thread variant (most have none, and
/// the driver answers a per-thread request for those with the bare symbol).
bool wrong_mode(const api_symbol &s, const ptds_expectation &x) {
  return x.known && s.per_thread != x.per_thread && mode_matters(s);
}

void set(map_finding &f, finding_kind k, std::string message) {
  f.kind = k;
  f.message = std::move(message);
}

/// An entry without a pointer: a request the driver answered with none, or a package's empty slot.
void judge_no_pointer(const captured_entry &c, const api_function &fn, const audit_context &ctx,
                      map_finding &f) {
  if (c.request)
    set(f, finding_kind::null_entry,
        c.raw_name + ": " + request_text(*c.request) + ", the driver gave no pointer" +
            (c.request->result ? " (result " + std::to_string(c.request->result) + ")" : "") +
            ": " + null_entry_reason(fn, c.request->version, ctx.captured));
  else
    set(f, finding_kind::missing,
        c.raw_name + ": the package holds no pointer (the driver answers " +
            (f.driver.empty() ? "nothing" : f.driver) + ")");
}

/// The checks that fail, and those that end the judging: a too-old per-thread request, another
/// function, a name the headers do not declare, no pointer, the wrong stream-0 mode.
bool judge_binding(const captured_entry &c, const api_function *fn,
                   const std::optional<api_symbol> &s, const ptds_expectation &x,
                   const audit_context &ctx, map_finding &f) {
  const std::string headers = cuda_version_text(api_headers_version());
  if (per_thread_too_old(c, fn)) {
    set(f, finding_kind::per_thread_too_old,
        c.raw_name + ": asked with the per-thread flag at " + std::to_string(c.request->version) +
            ", older than its per-thread variant: the driver gave no pointer");
  } else if (c.symbol &&
             (!variant_of(*c.symbol, c.function) || (s && s->function->name != c.function))) {
    // Before anything else: binding another function is wrong whatever the driver says.
    set(f, finding_kind::wrong_function,
        c.raw_name + ": bound " + f.captured + ", which is no variant of " + c.function);
  } else if (!fn) {
    set(f, finding_kind::unknown,
        c.function + ": not declared by the " + headers + " headers cuparity was built with; " +
            "not checked");
  } else if (!c.symbol) {
    judge_no_pointer(c, *fn, ctx, f);
  } else if (!s) {
    set(f, finding_kind::unknown,
        c.raw_name + ": " + f.captured + " is no symbol of " + c.function + " the " + headers +
            " headers declare; not checked");
  } else if (wrong_mode(*s, x)) {
    set(f, finding_kind::per_thread_wrong,
        c.raw_name + ": bound the " + mode_of(s->per_thread) + " " + f.captured + " where " +
            x.why + " selects " + mode_of(x.per_thread) +
            (f.driver.empty() ? "" : " (the driver answers " + f.driver + ")"));
  } else {
    return false;
  }
  return true;
}

/// Against the table: a request answered with another symbol than the newest ABI at the version
/// asked (abi_behind); an older ABI than the newest, of other parameter types (old_semantics) or
/// the same ones (abi_difference).
bool judge_abi(const captured_entry &c, const api_function &fn, const api_symbol &s,
               const audit_context &ctx, map_finding &f) {
  if (c.request && f.captured != f.expected) {
    const api_symbol due = find_api_symbol(f.expected).value_or(api_symbol{});
    const bool older_driver = due.abi && ctx.captured > 0 && due.abi->version > ctx.captured;
    set(f, finding_kind::abi_behind,
        c.raw_name + ": " + request_text(*c.request) + ", the driver handed out " + f.captured +
            (f.expected.empty() ? "; the table has no ABI for that request"
                                : "; the newest ABI at that version is " + f.expected) +
            (older_driver ? " (the driver, " + std::to_string(ctx.captured) + ", predates it)"
                          : ""));
    return true;
  }
  // The newest the driver that answered has: a newer header set's ABI is none it could bind.
  const api_abi &newest = newest_abi(fn, ctx.captured);
  if (s.abi->version >= newest.version)
    return false;
  const std::string diff = parameter_difference(s.abi->parameters, newest.parameters);
  set(f, diff.empty() ? finding_kind::abi_difference : finding_kind::old_semantics,
      c.raw_name + ": bound " + f.captured + " (ABI " + std::to_string(s.abi->version) +
          "), older than " + std::string(newest.symbol) + " (ABI " +
          std::to_string(newest.version) + ")" +
          (diff.empty() ? ", of the same parameter types" : ": " + diff));
  return true;
}

map_finding judge_entry(const captured_entry &c, const ptds_expectation &x,
                        const audit_context &ctx) {
  map_finding f;
  f.function = c.function;
  f.raw_name = c.raw_name;
  f.captured = c.symbol.value_or("");
  f.process = c.process;
  f.image = c.image;
  f.source = c.source;
  const api_function *fn = find_api_function(c.function);
  const auto s = c.symbol ? find_api_symbol(*c.symbol) : std::nullopt;
  if (fn)
    ask(c, *fn, x, ctx, f);
  if (find_entry(c.function) && x.known)
    f.internal = internal_choice(ctx.lib, c.function, x.per_thread);
  const bool matters = !s || mode_matters(*s);
  f.because = matters ? x.why : "";
  if (judge_binding(c, fn, s, x, ctx, f))
    return f;
  const std::string unchecked =
      matters && !x.known ? x.why + ": its stream-0 mode is not checked" : std::string();
  if (judge_abi(c, *fn, *s, ctx, f)) {
    if (!unchecked.empty())
      f.message += "; " + unchecked;
  } else if (!unchecked.empty()) {
    set(f, finding_kind::unchecked,
        c.raw_name + ": bound " + mode_of(s->per_thread) + " " + f.captured + " by " + c.source +
            "; " + unchecked);
  } else if (f.driver.empty()) {
    set(f, finding_kind::no_answer,
        c.raw_name + ": bound " + f.captured + ", the driver under test answers nothing");
  } else {
    f.kind = finding_kind::same;
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

/// The direct binders whose mode was inferred from what they bound, one line each.
void note_inferred(const std::map<binder_key, binder_mode> &binders, map_audit_report &r) {
  for (const auto &[key, b] : binders) {
    if (b.legacy.empty() == b.per_thread.empty()) // nothing to tell, or mixed_modes
      continue;
    const auto &[pid, image, caller] = key;
    const std::size_t n = b.legacy.size() + b.per_thread.size();
    r.inferred.push_back("pid " + std::to_string(pid) +
                         (image ? " (exec " + std::to_string(image) + ")" : std::string()) + ", " +
                         caller + ": " + mode_of(!b.per_thread.empty()) +
                         ", inferred from what it bound (" + std::to_string(n) + " function" +
                         (n == 1 ? "" : "s") + " with a per-thread variant)");
  }
}

void audit_entries(const captured_map &m, const audit_context &ctx, map_audit_report &r) {
  const std::string driver_file = canonical(r.driver_path);
  std::set<std::string> libraries; // each file the capture's pointers lay in, checked once
  const auto binders = m.schema == 2 ? infer_binder_modes(m) : std::map<binder_key, binder_mode>();
  std::set<std::string> unknown;
  for (const auto &e : m.entries) {
    const ptds_expectation x = m.schema == 1 ? r.ptds : expectation_for(m, e, binders);
    map_finding f = judge_entry(e, x, ctx);
    if (f.kind == finding_kind::unknown)
      unknown.insert(find_api_function(e.function) ? f.captured : e.function);
    if (m.schema == 2 && f.kind != finding_kind::same)
      f.message = "pid " + std::to_string(e.process) +
                  (e.image ? " (exec " + std::to_string(e.image) + ")" : std::string()) + ", " +
                  e.source + ": " + f.message;
    if (e.library && libraries.insert(*e.library).second && canonical(*e.library) != driver_file)
      r.notes.push_back("pointers of the capture lay in " + *e.library + ", not in the driver " +
                        "under test (" + driver_file + "): symbols are compared by name");
    add(r, std::move(f));
  }
  r.unknown.assign(unknown.begin(), unknown.end());
  if (m.schema != 2)
    return;
  note_inferred(binders, r);
  for (auto &f : process_findings(m, binders))
    add(r, std::move(f));
  // cuda.bindings' own pointer table (_inspect_function_pointers) against the capture; a table
  // not read whole is a note, never a silent pass (harness/capture/table_check.cpp).
  for (auto &f : table_findings(m))
    add(r, std::move(f));
  for (auto &n : table_notes(m))
    r.notes.push_back(std::move(n));
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
  r.headers_version = api_headers_version();
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
  audit_context ctx{lib};
  ctx.gpa = reinterpret_cast<gpa_fn>(lib.symbol("cuGetProcAddress_v2"));
  if (!ctx.gpa) {
    r.not_audited = "the driver under test does not export cuGetProcAddress_v2";
    return r;
  }
  int version = 0;
  if (auto get = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(lib.symbol("cuDriverGetVersion"));
      get && get(&version) == CUDA_SUCCESS)
    ctx.under_test = version;
  ctx.captured = m.driver_version.value_or(ctx.under_test);
  r.audited = true;
  audit_entries(m, ctx, r);
  return r;
}

} // namespace cuparity
