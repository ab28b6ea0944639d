// pytest-benchmark and pyperf JSON into per-call medians, every member checked on the way.
#include "harness/run/benchmark_json.hpp"

#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/matrix/external_benchmarks.hpp"

#include <cmath>
#include <set>

namespace cuparity {
namespace {

using nlohmann::json;

/// A time in seconds, which must be a positive number.
double seconds_at(const json &value, const std::string &path) {
  require_kind(value, path, json_kind::number);
  const double s = value.get<double>();
  if (!(s > 0) || !std::isfinite(s))
    throw json_input_error(path,
                           "a time must be a positive number of seconds, found " + value.dump());
  return s;
}

/// `benchmarks`, an array that must hold at least one.
const json &benchmarks_of(const json &doc) {
  require_kind(doc, "(file)", json_kind::object);
  const json &list = member(doc, "", "benchmarks", json_kind::array);
  if (list.empty())
    throw json_input_error("benchmarks", "lists no benchmark: nothing was timed");
  return list;
}

/// `cuparity_binding` of `object` (at `path`), where it is: "internal" or "nvidia", or refused.
void read_binding(benchmark_timing &t, const json *object, const std::string &path) {
  if (!object)
    return;
  const json *v = optional_member(*object, path, "cuparity_binding", json_kind::string);
  if (!v)
    return;
  t.binding_at = member_path(path, "cuparity_binding");
  t.binding = v->get<std::string>();
  if (t.binding != "internal" && t.binding != "nvidia")
    throw json_input_error(t.binding_at,
                           "'" + t.binding + "' is no binding (expected internal or nvidia)");
}

void add_unique(std::vector<benchmark_timing> &out, std::set<std::string> &seen, benchmark_timing t,
                const std::string &path) {
  if (!seen.insert(t.test).second)
    throw json_input_error(path, "the benchmark '" + t.test + "' is listed twice");
  out.push_back(std::move(t));
}

std::vector<double> to_ns(std::vector<double> seconds) {
  for (double &s : seconds)
    s *= 1e9;
  return seconds;
}

} // namespace

std::vector<benchmark_timing> read_pytest_benchmark(const json &doc) {
  std::vector<benchmark_timing> out;
  std::set<std::string> seen;
  const json &list = benchmarks_of(doc);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = element_path("benchmarks", i);
    require_kind(list[i], at, json_kind::object);
    benchmark_timing t;
    t.test = member(list[i], at, "fullname", json_kind::string).get<std::string>();
    const std::string stats_at = member_path(at, "stats");
    const json &stats = member(list[i], at, "stats", json_kind::object);
    std::vector<double> values;
    // --benchmark-save-data: every round's per-call time; else the summary's median alone.
    if (const json *data = optional_member(stats, stats_at, "data", json_kind::array))
      for (std::size_t k = 0; k < data->size(); ++k)
        values.push_back(seconds_at((*data)[k], element_path(member_path(stats_at, "data"), k)));
    if (values.empty())
      values.push_back(seconds_at(member(stats, stats_at, "median", json_kind::number),
                                  member_path(stats_at, "median")));
    t.values = values.size();
    t.median_ns = median(to_ns(std::move(values)));
    read_binding(t, optional_member(list[i], at, "extra_info", json_kind::object),
                 member_path(at, "extra_info"));
    add_unique(out, seen, std::move(t), member_path(at, "fullname"));
  }
  return out;
}

std::vector<benchmark_timing> read_pyperf(const json &doc) {
  std::vector<benchmark_timing> out;
  std::set<std::string> seen;
  const json &list = benchmarks_of(doc);
  const json *common = optional_member(doc, "", "metadata", json_kind::object);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = element_path("benchmarks", i);
    require_kind(list[i], at, json_kind::object);
    const json *own = optional_member(list[i], at, "metadata", json_kind::object);
    // A member of the benchmark's metadata, else of the file's (pyperf stores what all share once).
    const auto meta = [&](const std::string &key) -> std::pair<const json *, std::string> {
      for (const auto &[m, where] : {std::pair{own, member_path(at, "metadata")},
                                     std::pair{common, std::string("metadata")}})
        if (m)
          if (const json *v = optional_member(*m, where, key, json_kind::string))
            return {v, member_path(where, key)};
      return {nullptr, ""};
    };
    const auto [name, name_at] = meta("name");
    if (!name)
      throw json_input_error(member_path(at, "metadata"), "has no name (nor has the file's)");
    benchmark_timing t;
    t.test = name->get<std::string>();
    if (const auto [unit, unit_at] = meta("unit"); unit && *unit != "second")
      throw json_input_error(unit_at, "'" + unit->get<std::string>() + "' of '" + t.test +
                                          "' is no time (expected second)");
    std::vector<double> values;
    const std::string runs_at = member_path(at, "runs");
    const json &runs = member(list[i], at, "runs", json_kind::array);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const std::string run_at = element_path(runs_at, r);
      require_kind(runs[r], run_at, json_kind::object);
      if (const json *v = optional_member(runs[r], run_at, "values", json_kind::array))
        for (std::size_t k = 0; k < v->size(); ++k)
          values.push_back(seconds_at((*v)[k], element_path(member_path(run_at, "values"), k)));
    }
    if (values.empty())
      throw json_input_error(runs_at,
                             "no run of '" + t.test + "' has values (only calibration or warmups)");
    t.values = values.size();
    t.median_ns = median(to_ns(std::move(values)));
    read_binding(t, own, member_path(at, "metadata"));
    if (t.binding.empty())
      read_binding(t, common, "metadata");
    add_unique(out, seen, std::move(t), name_at);
  }
  return out;
}

std::vector<benchmark_timing> read_benchmark_file(const std::string &path,
                                                  benchmark_format format) {
  const json doc = read_json_file(path);
  try {
    return format == benchmark_format::pyperf ? read_pyperf(doc) : read_pytest_benchmark(doc);
  } catch (const json_input_error &e) {
    throw bad_input_error(path + ": " + e.what() + " (read as " + to_string(format) + " JSON)");
  }
}

} // namespace cuparity
