// The driver's release: asked of the simulated driver by dlsym, of the host otherwise.
#include "harness/driver/driver_release.hpp"

#include "harness/driver/driver_text.hpp"

#include <cstring>

namespace cuparity {

driver_release query_driver_release(const driver_library &lib, bool simulated) {
  if (!simulated)
    return read_kernel_driver_release();
  using release_fn = const char *(*)();
  auto release = reinterpret_cast<release_fn>(lib.symbol_behind_shim(simulated_release_symbol));
  const char *text = release ? release() : nullptr;
  if (!text || !*text)
    return {};
  try {
    // A library may return any bytes, and need not end them soon.
    return {valid_utf8(std::string_view(text, strnlen(text, 256))), "simulated"};
  } catch (const std::exception &) {
    return {};
  }
}

} // namespace cuparity
