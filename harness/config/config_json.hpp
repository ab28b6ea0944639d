// JSON form of the effective configuration (the `config` field of cell records).
#pragma once

#include "harness/config/config.hpp"

#include <nlohmann/json.hpp>

namespace cuparity {

[[nodiscard]] nlohmann::json to_json(const effective_config &c);

} // namespace cuparity
