// The third way to fill the facade: bind exactly what a captured package map bound.
#pragma once

#include "harness/capture/map_audit.hpp"
#include "harness/driver/backend.hpp"
#include "harness/driver/driver_library.hpp"

#include <memory>

namespace cuparity {

/// A backend that binds each entry to the symbol the captured package bound, looked up by name
/// in the driver under test, when that symbol is of the ABI cuparity calls (the symbol cuparity's
/// probing lands on, or its per-thread variant); any other entry is refused, its reason naming
/// the package's symbol and cuparity's. Stream 0 means what the package's documented parse of the
/// captured environment selects, so a package that binds otherwise fails the stream cases.
[[nodiscard]] std::unique_ptr<backend> make_map_backend(std::shared_ptr<driver_library> library,
                                                        const captured_map &map);

} // namespace cuparity
