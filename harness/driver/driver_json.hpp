// JSON forms of the driver layer's records: driver facts, the binding map, the audit.
#pragma once

#include "harness/driver/binding_audit.hpp"
#include "harness/driver/device_facts.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

[[nodiscard]] nlohmann::json to_json(const driver_facts &f);
[[nodiscard]] nlohmann::json to_json(const std::vector<binding> &map);
[[nodiscard]] nlohmann::json to_json(const audit_report &a);

/// "0x7f12..." for addresses in records.
[[nodiscard]] std::string address_text(const void *p);

} // namespace cuparity
