// Event names and their JSON envelope.
#include "harness/protocol/events.hpp"

#include "harness/protocol/name_table.hpp"

namespace cuparity {
namespace {

constexpr std::string_view event_names[] = {
#define CUPARITY_EVENT_NAME(name) #name,
    CUPARITY_EVENTS(CUPARITY_EVENT_NAME)
#undef CUPARITY_EVENT_NAME
};

} // namespace

std::string_view to_string(event_kind k) noexcept {
  return name_of(event_names, k);
}

std::optional<event_kind> parse_event_kind(std::string_view s) noexcept {
  return parse_name<event_kind>(event_names, s);
}

nlohmann::json make_event(event_kind k, nlohmann::json fields) {
  fields["event"] = to_string(k);
  return fields;
}

std::optional<event_kind> event_of(const nlohmann::json &event) {
  return named_member<event_kind>(event_names, event, "event");
}

} // namespace cuparity
