// Enum <-> name lookups over a table of names in enum order (the protocol's X-macro lists).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>

namespace cuparity {

template <typename E> std::string_view name_of(std::span<const std::string_view> names, E e) {
  const auto i = static_cast<std::size_t>(e);
  return i < names.size() ? names[i] : std::string_view{};
}

template <typename E>
std::optional<E> parse_name(std::span<const std::string_view> names, std::string_view s) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == s)
      return static_cast<E>(i);
  return std::nullopt;
}

/// The enum named by the string `member` of the object `j` (an event's "event", a record's
/// "type"); std::nullopt when `j` is no object, lacks it, or names nothing in `names`.
template <typename E>
std::optional<E> named_member(std::span<const std::string_view> names, const nlohmann::json &j,
                              const char *member) {
  if (!j.is_object() || !j.contains(member) || !j[member].is_string())
    return std::nullopt;
  return parse_name<E>(names, j[member].get_ref<const std::string &>());
}

} // namespace cuparity
