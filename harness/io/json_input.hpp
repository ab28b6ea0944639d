// Reading JSON that another process or run wrote: each member checked, errors naming its path.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace cuparity {

/// A member of a JSON document that is missing or of the wrong kind. `path` names it the way a
/// reader would look it up ("results[3].outcome"); what() is "<path>: <problem>".
class json_input_error : public std::invalid_argument {
public:
  json_input_error(const std::string &path, const std::string &problem);
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }

private:
  std::string m_path;
};

/// The kinds of value a member may be required to hold.
enum class json_kind { object, array, string, number, boolean };

/// "<path>.<name>" (just `name` at the top), and "<path>[<index>]".
[[nodiscard]] std::string member_path(const std::string &path, const std::string &name);
[[nodiscard]] std::string element_path(const std::string &path, std::size_t index);

/// Throws json_input_error at `path` unless `value` is of `kind`.
void require_kind(const nlohmann::json &value, const std::string &path, json_kind kind);

/// `parent[name]`, which must exist and be of `kind`; `path` is the parent's own path.
[[nodiscard]] const nlohmann::json &member(const nlohmann::json &parent, const std::string &path,
                                           const std::string &name, json_kind kind);

/// `parent[name]` when present and not null (then it must be of `kind`), else nullptr.
[[nodiscard]] const nlohmann::json *optional_member(const nlohmann::json &parent,
                                                    const std::string &path,
                                                    const std::string &name, json_kind kind);

} // namespace cuparity
