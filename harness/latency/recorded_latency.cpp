// Reading a summary's latency block back into samples, checking every member on the way.
#include "harness/latency/recorded_latency.hpp"

#include "harness/io/json_input.hpp"

namespace cuparity {
namespace {

std::vector<double> read_values(const nlohmann::json &values, const std::string &path) {
  require_kind(values, path, json_kind::array);
  std::vector<double> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    require_kind(values[i], element_path(path, i), json_kind::number);
    out.push_back(values[i].get<double>());
  }
  return out;
}

recorded_probe read_probe(const nlohmann::json &p, const std::string &path) {
  recorded_probe out;
  if (const auto *unit = optional_member(p, path, "unit", json_kind::string))
    out.unit = unit->get<std::string>();
  const auto samples_path = member_path(path, "samples");
  for (const auto &[series, values] : member(p, path, "samples", json_kind::object).items())
    out.samples[series] = read_values(values, member_path(samples_path, series));
  return out;
}

} // namespace

recorded_latency read_recorded_latency(const nlohmann::json &latency, const std::string &path) {
  recorded_latency out;
  if (latency.is_null())
    return out;
  require_kind(latency, path, json_kind::object);
  const auto probes_path = member_path(path, "probes");
  const auto *probes = optional_member(latency, path, "probes", json_kind::array);
  for (std::size_t i = 0; probes && i < probes->size(); ++i) {
    const auto where = element_path(probes_path, i);
    require_kind((*probes)[i], where, json_kind::object);
    const auto name = member((*probes)[i], where, "name", json_kind::string).get<std::string>();
    if (out.count(name))
      throw json_input_error(member_path(where, "name"), "probe '" + name + "' appears twice");
    out[name] = read_probe((*probes)[i], where);
  }
  return out;
}

} // namespace cuparity
