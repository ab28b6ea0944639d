// The running executable's build id: what tells two builds of cuparity apart.
#pragma once

#include <string>

namespace cuparity {

/// The GNU build id of the main program (its NT_GNU_BUILD_ID note, which the linker derives from
/// the linked code) in hex; "" when the binary carries none (linked with --build-id=none).
[[nodiscard]] std::string executable_build_id();

} // namespace cuparity
