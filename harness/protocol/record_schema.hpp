// What every results.jsonl record must hold: its members and their kinds, per record type.
#pragma once

#include <nlohmann/json.hpp>

namespace cuparity {

/// Throws json_input_error (harness/io/json_input.hpp) naming the member when `record` is no
/// record of ours: not an object, an unknown "type", a required member missing, a member of the
/// wrong kind, an outcome that is no outcome. Readers can then use the members without checks:
/// a results file is refused at its first bad line, never half-read.
void check_record(const nlohmann::json &record);

} // namespace cuparity
