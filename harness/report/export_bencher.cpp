// Bencher Metric Format: one benchmark per figure, one measure per unit.
#include "harness/report/export_bencher.hpp"

#include <cctype>

namespace cuparity {

std::string bencher_measure(const std::string &unit) {
  // Bencher's measures are slugs (at most 64 characters: lower case, digits, '-').
  if (unit == "ns")
    return "latency";
  if (unit == "s")
    return "wall-time-s";
  if (unit == "GB/s")
    return "bandwidth-gb-s";
  if (unit == "ratio")
    return "ratio-nvidia-internal";
  std::string slug = "value-";
  for (const char ch : unit)
    if (std::isalnum(static_cast<unsigned char>(ch)) && slug.size() < 64)
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return slug;
}

nlohmann::json bencher_json(const export_run &run, bool context_in_names) {
  auto out = nlohmann::json::object();
  for (const auto &f : run.figures) {
    nlohmann::json metric = {{"value", f.value}};
    if (f.lower)
      metric["lower_value"] = *f.lower;
    if (f.upper)
      metric["upper_value"] = *f.upper;
    out[figure_name(run, f, context_in_names)][bencher_measure(f.unit)] = metric;
  }
  return out;
}

} // namespace cuparity
