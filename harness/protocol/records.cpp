// Record-type names and the case record's JSON form.
#include "harness/protocol/records.hpp"

#include "harness/protocol/name_table.hpp"

#include <stdexcept>

namespace cuparity {
namespace {

constexpr std::string_view record_names[] = {
#define CUPARITY_RECORD_NAME(id, name) name,
    CUPARITY_RECORDS(CUPARITY_RECORD_NAME)
#undef CUPARITY_RECORD_NAME
};

const nlohmann::json &field(const nlohmann::json &j, const char *name,
                            bool (nlohmann::json::*is)() const noexcept) {
  if (!j.contains(name) || !(j[name].*is)())
    throw std::invalid_argument(std::string("case record: field '") + name +
                                "' is missing or of the wrong type");
  return j[name];
}

} // namespace

std::string_view to_string(record_type t) noexcept {
  return name_of(record_names, t);
}

std::optional<record_type> parse_record_type(std::string_view s) noexcept {
  return parse_name<record_type>(record_names, s);
}

nlohmann::json make_record(record_type t, nlohmann::json fields) {
  fields["type"] = to_string(t);
  return fields;
}

std::optional<record_type> record_type_of(const nlohmann::json &record) {
  return named_member<record_type>(record_names, record, "type");
}

bool is_record(const nlohmann::json &record, record_type t) {
  return record_type_of(record) == t;
}

nlohmann::json to_json(const case_record &r) {
  nlohmann::json out =
      make_record(record_type::case_result, {{"cell", r.cell},
                                             {"case", r.case_id},
                                             {"outcome", to_string(r.result)},
                                             {"message", r.message},
                                             {"observations", r.observations},
                                             {"duration_ms", r.duration_ms},
                                             {"costs",
                                              {{"lock_wait_ms", r.costs.lock_wait_ms},
                                               {"helper_start_ms", r.costs.helper_start_ms},
                                               {"helper_ms", r.costs.helper_ms}}}});
  if (!r.requirement.empty())
    out["requirement"] = r.requirement;
  if (r.started_at_ms >= 0)
    out["started_at_ms"] = r.started_at_ms;
  return out;
}

case_record case_record_from_json(const nlohmann::json &j) {
  if (!is_record(j, record_type::case_result))
    throw std::invalid_argument("not a case record");
  case_record r;
  r.cell = field(j, "cell", &nlohmann::json::is_string).get<std::string>();
  r.case_id = field(j, "case", &nlohmann::json::is_string).get<std::string>();
  const auto o = parse_outcome(field(j, "outcome", &nlohmann::json::is_string).get<std::string>());
  if (!o)
    throw std::invalid_argument("case record: unknown outcome '" + j["outcome"].get<std::string>() +
                                "'");
  r.result = *o;
  if (j.contains("message") && j["message"].is_string())
    r.message = j["message"].get<std::string>();
  if (j.contains("observations"))
    r.observations = j["observations"];
  if (j.contains("requirement") && j["requirement"].is_string())
    r.requirement = j["requirement"].get<std::string>();
  if (j.contains("duration_ms") && j["duration_ms"].is_number())
    r.duration_ms = j["duration_ms"].get<double>();
  if (j.contains("started_at_ms") && j["started_at_ms"].is_number())
    r.started_at_ms = j["started_at_ms"].get<double>();
  if (const auto c = j.find("costs"); c != j.end() && c->is_object()) {
    const auto number = [&](const char *key) {
      const auto v = c->find(key);
      return v != c->end() && v->is_number() ? v->get<double>() : 0.0;
    };
    r.costs = {number("lock_wait_ms"), number("helper_start_ms"), number("helper_ms")};
  }
  return r;
}

} // namespace cuparity
