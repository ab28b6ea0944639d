// The current time as every record and map writes it.
#pragma once

#include <string>

namespace cuparity {

/// Now, in UTC, ISO 8601 to the second: "2026-12-03T12:00:00Z".
[[nodiscard]] std::string utc_now();

} // namespace cuparity
