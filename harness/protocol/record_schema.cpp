// The members of each record type, checked when results.jsonl is read.
#include "harness/protocol/record_schema.hpp"

#include "harness/io/json_input.hpp"
#include "harness/protocol/outcome.hpp"
#include "harness/protocol/records.hpp"

#include <vector>

namespace cuparity {
namespace {

struct member_rule {
  const char *name;
  json_kind kind;
  bool required = true;
};

// A vector, not an initializer_list: a returned list would outlive the array behind it.
using rules = std::vector<member_rule>;
constexpr bool optional = false;

/// The members each type's readers rely on (docs/formats.md). Members not listed are free: a
/// newer writer may add some, and readers ignore what they do not know. suite_end's collected,
/// process_count, environment and budget are optional: absent from records written before issue
/// 49, and null (which optional_member takes as absent) where there is nothing to say.
rules rules_of(record_type t) {
  using k = json_kind;
  switch (t) {
  case record_type::run:
    return {
        {"schema", k::string},        {"matrix", k::string},  {"matrix_path", k::string, optional},
        {"shard", k::string},         {"started", k::string}, {"provenance", k::object},
        {"plan", k::object, optional}};
  case record_type::resume:
    return {{"started", k::string}, {"pending", k::number}};
  case record_type::cell:
    return {{"cell", k::string},
            {"config", k::object},
            {"pid", k::number, optional},
            {"device", k::string, optional},
            {"driver", k::object, optional},
            {"startup_ms", k::object, optional},
            {"launch_ms", k::number, optional},
            {"spawned_at_ms", k::number, optional}};
  case record_type::case_result:
    return {{"cell", k::string},
            {"case", k::string},
            {"outcome", k::string},
            {"message", k::string},
            {"observations", k::object},
            {"duration_ms", k::number},
            {"pid", k::number, optional},
            {"costs", k::object, optional},
            {"started_at_ms", k::number, optional},
            {"requirement", k::string, optional}};
  case record_type::cell_error:
    return {{"cell", k::string}, {"kind", k::string}, {"message", k::string}};
  case record_type::binding_map:
    return {{"cell", k::string}, {"map", k::array}};
  case record_type::cell_exit:
    return {{"cell", k::string},
            {"pid", k::number},
            {"wall_ms", k::number},
            {"exit_ms", k::number},
            {"ended_at_ms", k::number, optional}};
  case record_type::suite_end:
    return {{"cell", k::string},
            {"suite", k::string},
            {"tests", k::number},
            {"collected", k::number, optional},
            {"process_count", k::number, optional},
            {"environment", k::object, optional},
            {"budget", k::object, optional},
            {"processes", k::array},
            {"bindings", k::object},
            {"evidence", k::object},
            {"audit", k::object, optional},
            {"wall_ms", k::number, optional}};
  case record_type::functional_phase:
  case record_type::latency_phase:
    return {{"wall_s", k::number}, {"interrupted", k::boolean, optional}};
  case record_type::latency_environment:
    return {{"round", k::number}};
  case record_type::latency_sample:
    return {{"round", k::number},          {"cell", k::string}, {"probe", k::string},
            {"series", k::string},         {"kind", k::string}, {"unit", k::string},
            {"value", k::number, optional}};
  case record_type::latency_pairs:
    return {{"round", k::number},
            {"cell", k::string},
            {"probe", k::string},
            {"own", k::string, optional},
            {"other", k::string, optional},
            {"same_address", k::boolean, optional},
            {"block_iterations", k::number, optional},
            {"per_call_ns", k::object, optional},
            {"symbols", k::array, optional}, // the exported symbols the probe's entries bound
            {"other_missing", k::string, optional}}; // why the other series is absent
  case record_type::latency_cell:
    return {{"cell", k::string}, {"config", k::object}};
  case record_type::latency_error:
    return {{"cell", k::string}, {"round", k::number}, {"message", k::string}};
  }
  return {};
}

void check_round(const nlohmann::json &record) {
  if (!record.contains("round"))
    return;
  const auto &r = record["round"];
  if (!r.is_number_integer() || r.get<long long>() < 0)
    throw json_input_error("round", "expected a round number (0, 1, ...), found " + r.dump());
}

} // namespace

void check_record(const nlohmann::json &record) {
  if (!record.is_object())
    throw json_input_error("(line)", std::string("expected a record (a JSON object), found ") +
                                         (record.is_null() ? "null" : record.type_name()));
  const auto &type = member(record, "", "type", json_kind::string);
  const auto t = parse_record_type(type.get<std::string>());
  if (!t)
    throw json_input_error("type", "'" + type.get<std::string>() +
                                       "' is no record type of cuparity (docs/formats.md)");
  for (const member_rule &m : rules_of(*t)) {
    if (m.required)
      (void)member(record, "", m.name, m.kind);
    else
      (void)optional_member(record, "", m.name, m.kind);
  }
  if (*t == record_type::case_result) {
    const std::string o = record["outcome"].get<std::string>();
    if (!parse_outcome(o))
      throw json_input_error("outcome", "'" + o + "' is no outcome (docs/formats.md)");
  }
  check_round(record);
}

} // namespace cuparity
