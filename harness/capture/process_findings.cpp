// Findings across the entries of one process, and the evidence an entry is judged by.
#include "harness/capture/process_findings.hpp"

#include "harness/capture/api_expectation.hpp"
#include "harness/capture/capture_map.hpp"

#include <filesystem>
#include <map>
#include <set>

namespace cuparity {
namespace {

std::string without_mode(std::string s) {
  if (is_per_thread_symbol(s))
    s.resize(s.size() - 5);
  return s;
}

std::string file_name(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

std::string joined(const std::set<std::string> &names) {
  std::string out;
  for (const auto &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

} // namespace

std::string governing_package(const captured_map &m, const captured_entry &e) {
  static const std::set<std::string> bindings = {"cuda-bindings", "cuda_bindings", "cuda-python"};
  static const std::set<std::string> numba = {"numba", "numba-cuda", "numba_cuda"};
  if (e.caller_package && bindings.count(*e.caller_package))
    return "cuda.bindings";
  if (e.caller_package && numba.count(*e.caller_package))
    return "numba";
  // Numba's own binding is ctypes: its dlsym calls come from CPython's _ctypes module.
  const std::string caller = std::filesystem::path(e.caller).filename().string();
  const map_process *p = m.process(e.process, e.image);
  if (caller.starts_with("_ctypes") && p)
    for (const auto &n : numba)
      if (p->packages.count(n))
        return "numba";
  return {};
}

namespace {

/// A process image of the map: its pid and exec count.
using image_key = std::pair<long, int>;

std::string process_name(const captured_map &m, image_key at) {
  const map_process *p = m.process(at.first, at.second);
  std::string name = p && !p->argv.empty() ? p->argv.front() : std::string("?");
  return "pid " + std::to_string(at.first) +
         (at.second ? " (exec " + std::to_string(at.second) + ")" : std::string()) + " (" + name +
         ")";
}

struct function_use {
  std::map<std::string, std::set<std::string>> symbols; ///< symbol -> sources
  bool by_proc = false, direct = false;
  std::string direct_caller;
};

map_finding make(finding_kind k, const captured_map &m, image_key at, const std::string &function,
                 std::string message) {
  map_finding f;
  f.kind = k;
  f.function = function;
  f.raw_name = function;
  f.process = at.first;
  f.image = at.second;
  f.message = process_name(m, at) + ": " + message;
  return f;
}

std::string listed(const std::map<std::string, std::set<std::string>> &symbols) {
  std::string out;
  for (const auto &[s, sources] : symbols) {
    out += (out.empty() ? "" : ", ") + s + " (";
    bool first = true;
    for (const auto &src : sources) {
      out += (first ? "" : "+") + src;
      first = false;
    }
    out += ")";
  }
  return out;
}

void judge_function(const captured_map &m, image_key pid, const std::string &function,
                    const function_use &u, bool process_uses_proc, std::vector<map_finding> &out) {
  std::set<std::string> abis, modes;
  for (const auto &[s, sources] : u.symbols) {
    abis.insert(without_mode(s));
    modes.insert(is_per_thread_symbol(s) ? "per-thread" : "legacy");
  }
  // cudart asks for cuGetProcAddress itself at 11030 and 12000 (both ABIs) by design.
  if (abis.size() > 1 && !function.starts_with("cuGetProcAddress"))
    out.push_back(
        make(finding_kind::two_abis, m, pid, function,
             function + ": " + std::to_string(abis.size()) + " ABIs bound: " + listed(u.symbols)));
  if (modes.size() > 1)
    out.push_back(make(finding_kind::both_modes, m, pid, function,
                       function + ": bound both legacy and per-thread: " + listed(u.symbols)));
  if (process_uses_proc && u.direct && !u.by_proc && !function.starts_with("cuGetProcAddress"))
    out.push_back(make(finding_kind::only_direct, m, pid, function,
                       function + ": " + listed(u.symbols) + " from " + u.direct_caller +
                           ", never asked of cuGetProcAddress"));
}

} // namespace

std::map<binder_key, binder_mode> infer_binder_modes(const captured_map &m) {
  std::map<binder_key, binder_mode> out;
  for (const auto &e : m.entries) {
    if (e.source == "proc" || !e.symbol || !governing_package(m, e).empty())
      continue;
    binder_mode &b = out[{e.process, e.image, e.caller}];
    // Only a function with a per-thread variant shows a mode; an undeclared name shows nothing.
    const auto s = find_api_symbol(*e.symbol);
    if (s && mode_matters(*s))
      (s->per_thread ? b.per_thread : b.legacy).insert(std::string(s->function->name));
  }
  return out;
}

namespace {

/// The mode a direct binder's own binds show: all bare, all per-thread, or nothing to tell.
ptds_expectation inferred_mode(const captured_entry &e,
                               const std::map<binder_key, binder_mode> &binders) {
  ptds_expectation x;
  x.known = false;
  const std::string who = file_name(e.caller);
  const auto it = binders.find({e.process, e.image, e.caller});
  if (it == binders.end() || (it->second.legacy.empty() && it->second.per_thread.empty())) {
    x.why = "nothing known of what " + e.caller + " should bind (it bound no function with a " +
            "per-thread variant)";
    return x;
  }
  const binder_mode &b = it->second;
  if (!b.legacy.empty() && !b.per_thread.empty()) {
    x.why = who + " bound both stream-0 modes (mixed_modes names them)";
    return x;
  }
  x.known = true;
  x.per_thread = !b.per_thread.empty();
  const std::size_t n = x.per_thread ? b.per_thread.size() : b.legacy.size();
  x.why = "inferred from what " + who + " bound (" + std::to_string(n) + " function" +
          (n == 1 ? "" : "s") + " with a per-thread variant, all " +
          (x.per_thread ? "per-thread" : "legacy") + ")";
  return x;
}

} // namespace

ptds_expectation expectation_for(const captured_map &m, const captured_entry &e,
                                 const std::map<binder_key, binder_mode> &binders) {
  const std::string package = governing_package(m, e);
  if (!package.empty()) {
    std::map<std::string, std::optional<std::string>> env;
    if (const map_process *p = m.process(e.process, e.image))
      for (const auto &[k, v] : p->environment)
        env[k] = v;
    ptds_expectation x = expected_ptds(package, env);
    x.why = package + " (" + e.caller_package.value_or("ctypes") + "): " + x.why;
    return x;
  }
  if (!e.request)
    return inferred_mode(e, binders);
  ptds_expectation x;
  // docs/driver-facts.md#default-flag: DEFAULT answers as LEGACY_STREAM for a caller built
  // without CUDA_API_PER_THREAD_DEFAULT_STREAM, which the driver cannot see: legacy.
  x.per_thread = (e.request->flags & 2u) != 0;
  x.why = "asked with flags " + std::to_string(e.request->flags) +
          (x.per_thread ? " (PER_THREAD_DEFAULT_STREAM)"
                        : ((e.request->flags & 1u) ? " (LEGACY_STREAM)" : " (DEFAULT)"));
  return x;
}

std::vector<map_finding> process_findings(const captured_map &m,
                                          const std::map<binder_key, binder_mode> &binders) {
  std::map<image_key, std::map<std::string, function_use>> uses;
  std::set<image_key> proc_users;
  for (const auto &e : m.entries) {
    if (!e.symbol)
      continue;
    const image_key at{e.process, e.image};
    auto &u = uses[at][e.function];
    u.symbols[*e.symbol].insert(e.source);
    if (e.source == "proc") {
      u.by_proc = true;
      proc_users.insert(at);
    } else {
      u.direct = true;
      if (u.direct_caller.empty())
        u.direct_caller = file_name(e.caller);
    }
  }
  std::vector<map_finding> out;
  for (const auto &[pid, functions] : uses)
    for (const auto &[function, u] : functions)
      judge_function(m, pid, function, u, proc_users.count(pid) > 0, out);
  for (const auto &[key, b] : binders)
    if (!b.per_thread.empty() && !b.legacy.empty()) {
      const auto &[pid, image, caller] = key;
      map_finding f =
          make(finding_kind::mixed_modes, m, {pid, image}, "",
               file_name(caller) + " bound both stream-0 modes by PLT or dlsym: " + "legacy " +
                   joined(b.legacy) + "; per-thread " + joined(b.per_thread));
      f.raw_name = caller;
      out.push_back(std::move(f));
    }
  return out;
}

} // namespace cuparity
