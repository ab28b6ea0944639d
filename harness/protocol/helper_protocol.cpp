// Helper requests and replies as JSON lines.
#include "harness/protocol/helper_protocol.hpp"

#include "harness/protocol/events.hpp"

namespace cuparity {

std::string to_line(const helper_request &r) {
  return nlohmann::json{{"helper", r.name}, {"args", r.args}}.dump();
}

std::optional<helper_request> parse_helper_request(std::string_view line, std::string &error) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  const auto name = j.find("helper");
  const auto args = j.find("args");
  if (name == j.end() || !name->is_string()) {
    error = "member 'helper' is not a string";
    return std::nullopt;
  }
  if (args == j.end() || !args->is_array()) {
    error = "member 'args' is not an array";
    return std::nullopt;
  }
  helper_request r{name->get<std::string>(), {}};
  for (const auto &a : *args) {
    if (!a.is_string()) {
      error = "member 'args' holds a non-string";
      return std::nullopt;
    }
    r.args.push_back(a.get<std::string>());
  }
  return r;
}

nlohmann::json to_event(const helper_reply &r) {
  return make_event(event_kind::helper_result,
                    {{"exit_code", r.exit_code}, {"out", r.out}, {"err", r.err}});
}

std::optional<helper_reply> helper_reply_of(const nlohmann::json &event) {
  if (event_of(event) != event_kind::helper_result)
    return std::nullopt;
  const auto code = event.find("exit_code");
  const auto out = event.find("out");
  const auto err = event.find("err");
  if (code == event.end() || !code->is_number_integer() || out == event.end() ||
      !out->is_string() || err == event.end() || !err->is_string())
    return std::nullopt;
  return helper_reply{code->get<int>(), out->get<std::string>(), err->get<std::string>()};
}

} // namespace cuparity
