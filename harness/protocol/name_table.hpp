// Enum <-> name lookups over a table of names in enum order (the protocol's X-macro lists).
#pragma once

#include <cstddef>
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

} // namespace cuparity
