// Reading a known-changes file: [[change]] tables, each checked where it is written.
#include "harness/matrix/known_changes.hpp"

#include "harness/matrix/key_table.hpp"
#include "harness/matrix/text.hpp"

#include <filesystem>

namespace cuparity {
namespace {

using matrix_detail::toml_reader;

/// A TOML value as the JSON an observation would hold (integers, floats, booleans, strings, and
/// arrays and tables of them). Dates and times have no JSON form: refused.
nlohmann::json json_of(const toml_reader &r, const toml::node &n) {
  if (auto v = n.as_integer())
    return v->get();
  if (auto v = n.as_floating_point())
    return v->get();
  if (auto v = n.as_boolean())
    return v->get();
  if (auto v = n.as_string())
    return v->get();
  if (auto a = n.as_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &e : *a)
      out.push_back(json_of(r, e));
    return out;
  }
  if (auto t = n.as_table()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto &[k, v] : *t)
      out[std::string(k.str())] = json_of(r, v);
    return out;
  }
  r.error(n, "after: " + toml_reader::type_name(n) + " has no JSON form (an observation's value)");
}

/// The key must say what changed: the outcome, an observation or a binding entry.
void check_key(const toml_reader &r, const toml::node &n, const known_change &c) {
  const bool binding = c.key.rfind("binding.", 0) == 0 && c.key.size() > 8;
  const bool observation = c.key.rfind("observations.", 0) == 0 && c.key.size() > 13;
  if (!binding && !observation && c.key != "outcome")
    r.error(n, "key: " + matrix_detail::in_quotes(c.key) +
                   " is not \"outcome\", \"observations.<name>\" or \"binding.<entry>\"");
  if (binding != c.case_id.empty())
    r.error(n, binding ? "a binding change names no case" : "names no case");
}

known_change read_one(const toml_reader &r, const toml::table &t) {
  r.check_keys(t, "[[change]]", {"cell", "case", "key", "after", "reason"});
  known_change c;
  c.where = r.at(t);
  if (const auto *n = t.get("cell"))
    c.cell = r.string_of(*n, "cell");
  if (const auto *n = t.get("case"))
    c.case_id = r.string_of(*n, "case");
  const auto *key = t.get("key");
  if (!key)
    r.error(t, "[[change]] needs key (what changed)");
  c.key = r.string_of(*key, "key");
  check_key(r, *key, c);
  if (const auto *n = t.get("after"))
    c.after = json_of(r, *n);
  const auto *reason = t.get("reason");
  if (!reason || r.string_of(*reason, "reason").empty())
    r.error(reason ? *reason : static_cast<const toml::node &>(t),
            "[[change]] needs a reason (why the change is known)");
  c.reason = r.string_of(*reason, "reason");
  return c;
}

} // namespace

std::vector<known_change> read_known_changes(const std::string &path) {
  std::error_code ec;
  // /dev/null is the empty list, as for baselines.
  if (!std::filesystem::is_regular_file(path, ec) &&
      std::filesystem::weakly_canonical(path, ec) != "/dev/null")
    throw matrix_error(path + ": no such known-changes file");
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error &e) {
    throw matrix_error(path + ":" + std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column) + ": " +
                       std::string(e.description()));
  }
  const toml_reader r(path);
  r.check_keys(doc, "a known-changes file", {"change"});
  std::vector<known_change> out;
  if (const auto *changes = doc.get("change"))
    for (const toml::table *t : r.tables_of(*changes, "change"))
      out.push_back(read_one(r, *t));
  return out;
}

} // namespace cuparity
