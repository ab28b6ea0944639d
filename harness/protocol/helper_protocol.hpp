// The lines a cell sends its helper server, and what the server answers (helper_result events).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

/// One request: run helper `name` with `args` (a JSON object on one line of the server's stdin).
struct helper_request {
  std::string name;
  std::vector<std::string> args;
};

/// What a helper returned: its exit code (0 = all good) and what it printed for the case.
struct helper_reply {
  int exit_code = 0;
  std::string out; ///< the helper's output, which the case reads (e.g. "wrong=0")
  std::string err; ///< why it failed, when it threw
};

/// The name of the built-in request that runs no helper: the client sends it to have a server
/// up and its start-up paid before a case starts something timed.
inline constexpr std::string_view helper_ping = "ping";

[[nodiscard]] std::string to_line(const helper_request &r);
/// The request on `line`; std::nullopt, with `error` saying why, when it is none.
[[nodiscard]] std::optional<helper_request> parse_helper_request(std::string_view line,
                                                                 std::string &error);

/// The helper_result event carrying `r`.
[[nodiscard]] nlohmann::json to_event(const helper_reply &r);
/// The reply in a helper_result event; std::nullopt when `event` is no well-formed one.
[[nodiscard]] std::optional<helper_reply> helper_reply_of(const nlohmann::json &event);

} // namespace cuparity
