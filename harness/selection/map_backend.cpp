// The map backend: a captured package's symbols, bound by name on the driver under test.
#include "harness/selection/map_backend.hpp"

#include "backends/internal/probe_rules.hpp"

#include <map>

namespace cuparity {
namespace {

class map_backend final : public backend {
public:
  map_backend(std::shared_ptr<driver_library> library, const captured_map &map)
      : m_lib(std::move(library)), m_ptds(expected_ptds(map).per_thread),
        m_source(map.kind + " " + map.version + " (" + map.path + ")") {
    for (const auto &e : map.entries)
      m_symbols.emplace(e.function, e.symbol.value_or(""));
  }

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
    if (it == m_symbols.end() || it->second.empty()) {
      r.missing_reason = it == m_symbols.end() ? base + " is not in the captured map of " + m_source
                                               : m_source + " holds no pointer for " + base;
      return r;
    }
    const std::string &symbol = it->second;
    // The symbols of cuparity's ABI for this entry: where Numba's probing lands, legacy or
    // per-thread (entries.inl: an entry's ABI is the one probing lands on).
    const probe_rules rules = probe_rules::numba();
    std::string ours;
    for (bool ptds : {false, true})
      for (const auto &c : rules.candidates(base, ptds))
        if (m_lib->symbol(c.c_str())) {
          if (c == symbol) {
            r.address = m_lib->symbol(c.c_str());
            r.symbol = symbol;
            r.not_bound = false;
            return r;
          }
          if (ours.empty())
            ours = c;
          break;
        }
    r.missing_reason = m_source + " binds " + symbol + ", an ABI other than cuparity's " +
                       (ours.empty() ? "(none exported)" : ours) + " (ABI " +
                       std::to_string(entry.abi_version) + "): refused";
    return r;
  }

private:
  std::shared_ptr<driver_library> m_lib;
  bool m_ptds;
  std::string m_source;
  std::map<std::string, std::string> m_symbols; ///< function -> symbol ("" for no pointer)
};

} // namespace

std::unique_ptr<backend> make_map_backend(std::shared_ptr<driver_library> library,
                                          const captured_map &map) {
  return std::make_unique<map_backend>(std::move(library), map);
}

} // namespace cuparity
