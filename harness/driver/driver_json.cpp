// JSON forms of the driver layer's records: driver facts, the binding map, the audit.
#include "harness/driver/driver_json.hpp"

#include <cstdio>

namespace cuparity {

std::string address_text(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return p ? buf : "null";
}

nlohmann::json to_json(const driver_facts &f) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto &d : f.devices)
    devices.push_back(
        {{"ordinal", d.ordinal},
         {"name", d.name},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"total_memory", d.total_memory},
         {"uuid", d.uuid}});
  return {{"driver_version", f.driver_version},
          {"driver_version_text", version_text(f.driver_version)},
          {"init_error", f.init_error},
          {"devices", devices}};
}

nlohmann::json to_json(const std::vector<binding> &map) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &b : map) {
    nlohmann::json j{{"entry", b.entry},
                     {"abi", b.abi_version},
                     {"symbol", b.symbol},
                     {"exported", b.exported},
                     {"address", address_text(b.address)},
                     {"missing", b.missing}};
    if (b.query_result >= 0)
      j["query_result"] = b.query_result, j["symbol_status"] = b.symbol_status;
    if (b.missing)
      j["missing_reason"] = b.missing_reason;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json to_json(const audit_report &a) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto &r : a.rows)
    rows.push_back({{"entry", r.entry},
                    {"abi", r.abi_version},
                    {"bound", r.bound_symbol},
                    {"bound_address", address_text(r.bound)},
                    {"driver_answer", r.expected_symbol},
                    {"driver_address", address_text(r.expected)},
                    {"query_result", r.query_result},
                    {"symbol_status", r.symbol_status},
                    {"match", r.match}});
  return {{"supported", a.supported},
          {"not_supported_reason", a.not_supported_reason},
          {"flag", a.flag},
          {"mismatches", a.mismatches},
          {"rows", rows}};
}

} // namespace cuparity
