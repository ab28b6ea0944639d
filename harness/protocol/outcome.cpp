// Outcome names as they appear in results.jsonl, summaries and matrices.
#include "harness/protocol/outcome.hpp"

#include <array>
#include <utility>

namespace cuparity {
namespace {
constexpr std::array<std::pair<outcome, std::string_view>, 8> names{{
    {outcome::pass, "pass"},
    {outcome::fail, "fail"},
    {outcome::not_supported, "not_supported"},
    {outcome::resource_error, "resource_error"},
    {outcome::crash, "crash"},
    {outcome::timeout, "timeout"},
    {outcome::error, "error"},
    {outcome::flaky, "flaky"},
}};
} // namespace

std::string_view to_string(outcome o) noexcept {
  for (const auto &[k, v] : names)
    if (k == o)
      return v;
  return "error";
}

std::optional<outcome> parse_outcome(std::string_view s) noexcept {
  for (const auto &[k, v] : names)
    if (v == s)
      return k;
  return std::nullopt;
}

bool is_success(outcome o) noexcept {
  return o == outcome::pass || o == outcome::not_supported;
}

} // namespace cuparity
