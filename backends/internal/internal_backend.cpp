// Internal backend: each entry is the first exported symbol among Numba's suffix candidates.
#include "backends/internal/internal_backend.hpp"

namespace cuparity {
namespace {

class internal_backend final : public backend {
public:
  internal_backend(std::shared_ptr<driver_library> lib, bool ptds, suffix_rules rules)
      : m_lib(std::move(lib)), m_ptds(ptds), m_rules(std::move(rules)) {}

  std::string_view name() const noexcept override { return "internal"; }
  const std::string &driver_path() const noexcept override { return m_lib->resolved_path(); }
  bool per_thread_default_stream() const noexcept override { return m_ptds; }

  resolution resolve(const entry_info &entry) override {
    resolution r;
    auto names = m_rules.candidates(entry.name, m_ptds);
    for (const auto &n : names) {
      if (void *p = m_lib->symbol(n.c_str())) {
        r.address = p;
        r.symbol = n;
        return r;
      }
    }
    // Numba binds a stub that raises "Driver missing function" when called; the facade does the
    // same with driver_error, so a missing entry fails at its call, not at load.
    r.missing_reason = "not exported by " + m_lib->resolved_path() + " (tried";
    for (const auto &n : names)
      r.missing_reason += " " + n;
    r.missing_reason += ")";
    return r;
  }

private:
  std::shared_ptr<driver_library> m_lib;
  bool m_ptds;
  suffix_rules m_rules;
};

} // namespace

std::unique_ptr<backend> make_internal_backend(std::shared_ptr<driver_library> library,
                                               bool per_thread_default_stream, suffix_rules rules) {
  return std::make_unique<internal_backend>(std::move(library), per_thread_default_stream,
                                            std::move(rules));
}

} // namespace cuparity
