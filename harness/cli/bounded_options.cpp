// Validators for numeric flags: a finite number or a whole one within stated bounds, said so.
#include "harness/cli/bounded_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace cuparity::cli {
namespace {

/// The shortest text that reads back as `d` ("0.001", "3600").
std::string number_text(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

/// The flag's text as given, for messages (never the whole of a pasted megabyte).
std::string shown(const std::string &text) {
  return "'" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
}

} // namespace

CLI::Validator whole_number(long long min, long long max) {
  const std::string bounds = "from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, bounds](std::string &text) -> std::string {
        long long n = 0;
        const char *end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, n);
        if (text.empty() || ptr != end || ec == std::errc::invalid_argument)
          return "must be a whole number " + bounds + ", not " + shown(text);
        if (ec == std::errc::result_out_of_range || n < min || n > max)
          return "must be " + bounds + ", not " + shown(text);
        return {};
      },
      "INT " + bounds);
}

CLI::Validator finite_number(double min, bool min_included, double max) {
  const std::string bounds = (min_included ? "at least " : "greater than ") + number_text(min) +
                             " and at most " + number_text(max);
  return CLI::Validator(
      [min, min_included, max, bounds](std::string &text) -> std::string {
        char *end = nullptr;
        const double d = text.empty() ? NAN : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size())
          return "must be a number " + bounds + ", not " + shown(text);
        if (!std::isfinite(d))
          return "must be a finite number " + bounds + ", not " + shown(text);
        if (d < min || (!min_included && d == min) || d > max)
          return "must be " + bounds + ", not " + shown(text);
        return {};
      },
      "NUMBER " + bounds);
}

} // namespace cuparity::cli
