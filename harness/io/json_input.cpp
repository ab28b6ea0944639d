// Member-by-member checks of JSON input, with the member's path in every error.
#include "harness/io/json_input.hpp"

namespace cuparity {
namespace {

const char *kind_name(json_kind kind) {
  switch (kind) {
  case json_kind::object:
    return "an object";
  case json_kind::array:
    return "an array";
  case json_kind::string:
    return "a string";
  case json_kind::number:
    return "a number";
  case json_kind::boolean:
    return "true or false";
  }
  return "a value";
}

bool is_kind(const nlohmann::json &v, json_kind kind) {
  switch (kind) {
  case json_kind::object:
    return v.is_object();
  case json_kind::array:
    return v.is_array();
  case json_kind::string:
    return v.is_string();
  case json_kind::number:
    return v.is_number();
  case json_kind::boolean:
    return v.is_boolean();
  }
  return false;
}

} // namespace

json_input_error::json_input_error(const std::string &path, const std::string &problem)
    : std::invalid_argument(path + ": " + problem), m_path(path) {}

std::string member_path(const std::string &path, const std::string &name) {
  return path.empty() ? name : path + "." + name;
}

std::string element_path(const std::string &path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

void require_kind(const nlohmann::json &value, const std::string &path, json_kind kind) {
  if (!is_kind(value, kind))
    throw json_input_error(path, std::string("expected ") + kind_name(kind) + ", found " +
                                     (value.is_null() ? "null" : value.type_name()));
}

const nlohmann::json &member(const nlohmann::json &parent, const std::string &path,
                             const std::string &name, json_kind kind) {
  const auto where = member_path(path, name);
  if (!parent.is_object() || !parent.contains(name))
    throw json_input_error(where, std::string("missing (expected ") + kind_name(kind) + ")");
  require_kind(parent[name], where, kind);
  return parent[name];
}

const nlohmann::json *optional_member(const nlohmann::json &parent, const std::string &path,
                                      const std::string &name, json_kind kind) {
  if (!parent.is_object() || !parent.contains(name) || parent[name].is_null())
    return nullptr;
  require_kind(parent[name], member_path(path, name), kind);
  return &parent[name];
}

} // namespace cuparity
