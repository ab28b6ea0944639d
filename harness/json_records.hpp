// JSON forms of the records cuparity writes: effective config, driver facts, binding map, audit.
#pragma once

#include "binding_audit.hpp"
#include "config.hpp"
#include "device_facts.hpp"

#include <nlohmann/json.hpp>

namespace cuparity {

[[nodiscard]] nlohmann::json to_json(const effective_config &c);
[[nodiscard]] nlohmann::json to_json(const driver_facts &f);
[[nodiscard]] nlohmann::json to_json(const std::vector<binding> &map);
[[nodiscard]] nlohmann::json to_json(const audit_report &a);

/// "0x7f12..." for addresses in records.
[[nodiscard]] std::string address_text(const void *p);

} // namespace cuparity
