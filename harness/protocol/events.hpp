// The events a cell or probe process writes to the runner, one JSON object per line.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace cuparity {

// Every event name, once. A cell writes cell_start, then per case lock_wait (it waits for the
// GPU lock), case_start and case_end, then cell_end (or cell_error when it cannot start). A probe
// process writes cell_start, one probe per series and round, one probe_pairs per probe and round
// (its series' block times side by side), round_done after each round, and probe_error for a
// command it cannot parse. A cell's helper server (`cuparity helper --serve`) writes cell_start,
// then one helper_result per request.
#define CUPARITY_EVENTS(X)                                                                         \
  X(cell_start)                                                                                    \
  X(lock_wait)                                                                                     \
  X(case_start)                                                                                    \
  X(case_end)                                                                                      \
  X(cell_end)                                                                                      \
  X(cell_error)                                                                                    \
  X(probe)                                                                                         \
  X(probe_pairs)                                                                                   \
  X(probe_error)                                                                                   \
  X(round_done)                                                                                    \
  X(helper_result)

enum class event_kind {
#define CUPARITY_EVENT_ENUM(name) name,
  CUPARITY_EVENTS(CUPARITY_EVENT_ENUM)
#undef CUPARITY_EVENT_ENUM
};

[[nodiscard]] std::string_view to_string(event_kind k) noexcept;
[[nodiscard]] std::optional<event_kind> parse_event_kind(std::string_view s) noexcept;

/// `fields` with its "event" member set to `k`.
[[nodiscard]] nlohmann::json make_event(event_kind k,
                                        nlohmann::json fields = nlohmann::json::object());
/// The kind of an event line; std::nullopt for a line that is no event of ours.
[[nodiscard]] std::optional<event_kind> event_of(const nlohmann::json &event);

} // namespace cuparity
