// Case outcomes (VK-GL-CTS style: not_supported is an outcome, not a failure).
#pragma once

#include <optional>
#include <string_view>

namespace cuparity {

/// flaky: an external suite's test whose outcome changed between tries (each try in a fresh
/// process); never a success, excused only by its suite's flakes file.
enum class outcome { pass, fail, not_supported, resource_error, crash, timeout, error, flaky };

[[nodiscard]] std::string_view to_string(outcome o) noexcept;
[[nodiscard]] std::optional<outcome> parse_outcome(std::string_view s) noexcept;
/// pass and not_supported are fine; everything else needs an expectation to be accepted.
[[nodiscard]] bool is_success(outcome o) noexcept;

} // namespace cuparity
