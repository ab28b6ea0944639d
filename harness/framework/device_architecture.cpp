// The process's device architecture and the kernel images chosen for it.
#include "harness/framework/device_architecture.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace cuparity {
namespace {

// Set once at the start, read by cases on any thread afterwards (atomics: no data race with a
// case's own threads).
std::atomic<int> g_device_cc_major{0};
std::atomic<int> g_device_cc_minor{0};

} // namespace

void note_device_architecture(const driver_facts &facts) {
  const bool known = !facts.devices.empty() && facts.devices.front().cc_major > 0;
  g_device_cc_major.store(known ? facts.devices.front().cc_major : 0);
  g_device_cc_minor.store(known ? facts.devices.front().cc_minor : 0);
}

compute_capability device_architecture() noexcept {
  return {g_device_cc_major.load(), g_device_cc_minor.load()};
}

const kernel_image &kernel_image_for_device(std::string_view name) {
  const compute_capability cc = device_architecture();
  if (!cc.known())
    throw std::invalid_argument("kernel image '" + std::string(name) +
                                "': the device's compute capability is unknown (the process's "
                                "start could not query device 0)");
  return kernel_registry::instance().find(name, cc.sm());
}

} // namespace cuparity
