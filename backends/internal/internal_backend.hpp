// The internal backend: dlopen of the driver and Numba's suffix probing per entry.
#pragma once

#include "backends/internal/suffix_rules.hpp"
#include "harness/driver/backend.hpp"
#include "harness/driver/driver_library.hpp"

#include <memory>

namespace cuparity {

[[nodiscard]] std::unique_ptr<backend>
make_internal_backend(std::shared_ptr<driver_library> library, bool per_thread_default_stream,
                      suffix_rules rules = suffix_rules::numba());

} // namespace cuparity
