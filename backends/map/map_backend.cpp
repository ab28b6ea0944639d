// The map backend: a captured package's (or process's) symbols, bound by name on the driver under
// test.
#include "backends/map/map_backend.hpp"

#include "backends/internal/suffix_rules.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/process_findings.hpp"
#include "harness/driver/older_abi.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace cuparity {
namespace {

/// function -> every symbol a process tree (/2) bound for it, what the processes' own code bound by
/// PLT or dlsym first, then what they asked of cuGetProcAddress; for a package map (/1) its first
/// symbol ("" for no pointer).
std::map<std::string, std::vector<std::string>> bound_symbols(const captured_map &map) {
  std::map<std::string, std::vector<std::string>> out;
  for (const bool direct : {true, false})
    for (const auto &e : map.entries) {
      if ((e.source == "proc") == direct || (map.schema == 2 && !e.symbol))
        continue;
      auto &list = out[e.function];
      // A package's table (/1) is what the package calls: its first entry of a function decides,
      // as it always has (cuda.bindings holds __cuCtxGetDevice and __cuCtxGetDevice_v2).
      if (map.schema == 1 && !list.empty())
        continue;
      if (std::find(list.begin(), list.end(), e.symbol.value_or("")) == list.end())
        list.push_back(e.symbol.value_or(""));
    }
  return out;
}

/// What stream 0 means through a map: a package map's documented parse (/1); for a process tree,
/// the variable of a known package that bound through it, else per-thread only where the
/// processes' own code bound a per-thread variant by PLT or dlsym. cudart asks for both modes of
/// every function that has them (flags 0 and 2: 67 functions in PyTorch 2.11 on an H200), so what
/// it asked of cuGetProcAddress says nothing of the process's stream 0.
bool map_per_thread(const captured_map &map) {
  if (map.schema == 1)
    return expected_ptds(map).per_thread;
  for (const auto &e : map.entries) {
    const std::string package = governing_package(map, e);
    if (package.empty())
      continue;
    std::map<std::string, std::optional<std::string>> env;
    if (const map_process *p = map.process(e.process, e.image))
      env.insert(p->environment.begin(), p->environment.end());
    return expected_ptds(package, env).per_thread;
  }
  for (const auto &e : map.entries)
    if (e.source != "proc" && e.symbol && is_per_thread_symbol(*e.symbol))
      return true;
  return false;
}

/// `symbols` with those of the stream-0 mode `per_thread` first, order otherwise kept: a process
/// that bound both modes of a function runs in its own mode, one that bound only the other mode
/// (a PTDS bug) runs through what it bound, so the stream cases catch it.
std::vector<std::string> mode_first(const std::vector<std::string> &symbols, bool per_thread) {
  std::vector<std::string> out;
  for (const bool own : {true, false})
    for (const auto &s : symbols)
      if ((is_per_thread_symbol(s) == per_thread) == own)
        out.push_back(s);
  return out;
}

class map_backend final : public backend {
public:
  map_backend(std::shared_ptr<driver_library> library, const captured_map &map)
      : m_lib(std::move(library)), m_symbols(bound_symbols(map)), m_ptds(map_per_thread(map)),
        m_source(map.kind + (map.version.empty() ? " " + map.name : " " + map.version) + " (" +
                 map.path + ")") {}

  [[nodiscard]] std::string_view name() const noexcept override { return "map"; }
  [[nodiscard]] const std::string &driver_path() const noexcept override {
    return m_lib->resolved_path();
  }
  [[nodiscard]] bool per_thread_default_stream() const noexcept override { return m_ptds; }

  resolution resolve(const entry_info &entry) override {
    resolution r;
    const std::string base(entry.name);
    const auto it = m_symbols.find(base);
    r.not_bound = true; // until bound below
    if (it == m_symbols.end() || it->second.front().empty()) {
      r.missing_reason = it == m_symbols.end() ? base + " is not in the captured map of " + m_source
                                               : m_source + " holds no pointer for " + base;
      return r;
    }
    // An older ABI of the entry's own signature first (PyTorch's cuBLASLt dlsyms the CUDA 2.0
    // cuCtxPushCurrent; cudart asks for cuEventElapsedTime at 2000 too): called as bound, so the
    // cases judge it beside the current ABI (older_abis.inl). Then cuparity's own ABI.
    const std::vector<std::string> candidates = mode_first(it->second, m_ptds);
    for (const auto &symbol : candidates)
      if (const auto older = older_abi_version(entry.id, symbol))
        if (void *p = m_lib->symbol(symbol.c_str())) {
          r.address = p;
          r.symbol = symbol;
          r.abi_version = *older;
          r.not_bound = false;
          return r;
        }
    std::string ours;
    for (const auto &symbol : candidates) {
      ours = cuparity_abi_symbol(base, symbol, r);
      if (!r.not_bound)
        return r;
    }
    r.missing_reason = m_source + " binds " + it->second.front() +
                       ", an ABI other than cuparity's " +
                       (ours.empty() ? "(none exported)" : ours) + " (ABI " +
                       std::to_string(entry.abi_version) + "): refused";
    return r;
  }

private:
  /// Binds `symbol` into `r` when it is cuparity's ABI of `base` (where Numba's probing lands,
  /// legacy or per-thread: entries.inl); returns cuparity's legacy symbol either way.
  std::string cuparity_abi_symbol(const std::string &base, const std::string &symbol,
                                  resolution &r) const {
    const suffix_rules rules = suffix_rules::numba();
    std::string ours;
    for (bool ptds : {false, true})
      for (const auto &c : rules.candidates(base, ptds))
        if (m_lib->symbol(c.c_str())) {
          if (c == symbol) {
            r.address = m_lib->symbol(c.c_str());
            r.symbol = symbol;
            r.not_bound = false;
            return ours.empty() ? c : ours;
          }
          if (ours.empty())
            ours = c;
          break;
        }
    return ours;
  }

  std::shared_ptr<driver_library> m_lib;
  std::map<std::string, std::vector<std::string>> m_symbols; ///< function -> symbols bound
  bool m_ptds;
  std::string m_source;
};

} // namespace

std::unique_ptr<backend> make_map_backend(std::shared_ptr<driver_library> library,
                                          const captured_map &map) {
  return std::make_unique<map_backend>(std::move(library), map);
}

} // namespace cuparity
