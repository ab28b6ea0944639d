// Text a driver returns (device names, error names), made valid UTF-8 before it reaches JSON.
#pragma once

#include <string>
#include <string_view>

namespace cuparity {

/// `text` with every byte that is not part of a valid UTF-8 sequence written as `\xNN`. A driver
/// may return any bytes (a corrupted device name); nlohmann::json refuses invalid UTF-8 when it
/// writes (type_error.316), and a report must never stop on what the driver said.
[[nodiscard]] std::string valid_utf8(std::string_view text);

} // namespace cuparity
