// The Driver facade's slow paths: first-use resolution, the binding map, error construction.
#include "harness/driver/driver.hpp"

#include "harness/driver/driver_library.hpp"
#include "harness/driver/driver_text.hpp"

#include <utility>

namespace cuparity {

driver::driver(std::unique_ptr<class backend> b) : m_backend(std::move(b)) {}

driver::~driver() = default;

void *driver::resolve_slow(entry_id id) {
  auto &s = m_slots[static_cast<std::size_t>(id)];
  // call_once gives Numba's "resolve on first request, cache it" with a thread-safe guarantee:
  // concurrent first calls resolve exactly once (cuda-python's lazy init once raced:
  // rapidsai/rapidsmpf#434, fixed by cuda-python #835/#836).
  std::call_once(s.once, [&] {
    m_resolve_count.fetch_add(1, std::memory_order_relaxed);
    s.result = m_backend->resolve(info(id));
    s.done.store(true, std::memory_order_release);
    s.address.store(s.result.address, std::memory_order_release);
  });
  return s.address.load(std::memory_order_acquire);
}

std::size_t driver::resolve_all() {
  std::size_t missing = 0;
  for (const auto &e : all_entries())
    if (!address(e.id))
      ++missing;
  return missing;
}

std::vector<binding> driver::binding_map() const {
  std::vector<binding> out;
  for (const auto &e : all_entries()) {
    const auto &s = m_slots[static_cast<std::size_t>(e.id)];
    if (!s.done.load(std::memory_order_acquire))
      continue;
    binding b;
    b.entry = std::string(e.name);
    b.abi_version = s.result.abi_version ? s.result.abi_version : e.abi_version;
    b.symbol = s.result.symbol;
    b.address = s.result.address;
    b.exported = symbol_at(s.result.address);
    b.query_result = s.result.query_result;
    b.symbol_status = s.result.symbol_status;
    b.missing = s.result.address == nullptr;
    b.missing_reason = s.result.missing_reason;
    b.not_bound = s.result.not_bound;
    out.push_back(std::move(b));
  }
  return out;
}

void driver::note_undeclared(entry_id id) noexcept {
  const std::lock_guard<std::mutex> g(m_notes_lock);
  m_undeclared.set(static_cast<std::size_t>(id));
}

std::vector<entry_id> driver::take_undeclared_calls() {
  const std::lock_guard<std::mutex> g(m_notes_lock);
  std::vector<entry_id> out;
  for (const auto &e : all_entries())
    if (m_undeclared.test(static_cast<std::size_t>(e.id)))
      out.push_back(e.id);
  m_undeclared.reset();
  return out;
}

void driver::note_cleanup_failure(entry_id id, CUresult code, bool missing, std::string handles,
                                  const std::source_location &site) noexcept {
  try {
    const auto &s = m_slots[static_cast<std::size_t>(id)];
    std::string text = std::string(info(id).name);
    if (!s.result.symbol.empty() && s.result.symbol != text)
      text += " (" + s.result.symbol + ")";
    text += missing ? " is not bound (" + s.result.missing_reason + ")"
                    : " returned " + error_name(code);
    if (!handles.empty())
      text += " on " + handles;
    text += std::string(" at ") + site.file_name() + ":" + std::to_string(site.line());
    const std::lock_guard<std::mutex> g(m_notes_lock);
    m_cleanup_failures.push_back(std::move(text));
  } catch (...) {
    // out of memory while describing a failed clean-up: nothing better can be done here
  }
}

std::vector<std::string> driver::take_cleanup_failures() {
  const std::lock_guard<std::mutex> g(m_notes_lock);
  return std::exchange(m_cleanup_failures, {});
}

std::string driver::error_name(CUresult code) noexcept {
  try {
    if (auto *fn = reinterpret_cast<PFN_cuGetErrorName_v6000>(address(entry_id::cuGetErrorName))) {
      const char *name = nullptr;
      if (fn(code, &name) == CUDA_SUCCESS && name)
        return valid_utf8(name); // the driver's words, whatever their bytes
    }
  } catch (...) {
    // fall through to the stand-in below: naming an error must never throw
  }
  return "unnamed CUresult " + std::to_string(static_cast<int>(code));
}

void driver::throw_missing(entry_id id, const std::source_location &site) {
  const auto &s = m_slots[static_cast<std::size_t>(id)];
  driver_error::details d;
  d.code = CUDA_ERROR_NOT_FOUND;
  d.code_name = "CUDA_ERROR_NOT_FOUND";
  d.entry = std::string(info(id).name);
  d.symbol = s.result.symbol;
  d.backend = std::string(m_backend->name());
  d.site = site;
  d.missing_function = true;
  d.not_bound = s.result.not_bound;
  d.detail = s.result.missing_reason;
  throw driver_error(std::move(d));
}

void driver::throw_result(entry_id id, CUresult code, const std::source_location &site,
                          std::string handles) {
  const auto &s = m_slots[static_cast<std::size_t>(id)];
  driver_error::details d;
  d.code = code;
  d.code_name = error_name(code);
  d.entry = std::string(info(id).name);
  d.symbol = s.result.symbol;
  d.backend = std::string(m_backend->name());
  d.site = site;
  d.handles = std::move(handles);
  throw driver_error(std::move(d));
}

} // namespace cuparity
