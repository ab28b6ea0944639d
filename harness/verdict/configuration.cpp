// Expectations about a cell's configuration itself: binding, stream 0, fallback and warnings.
#include "harness/verdict/compare_steps.hpp"

namespace cuparity::verdict {
namespace {

const char *boolean(bool b) {
  return b ? "true" : "false";
}

/// A string setting: compared as recorded ("" when absent), shown as "?" when absent.
void expect_string(std::vector<std::string> &out, const nlohmann::json &config, const char *key,
                   const std::string &label, const std::optional<std::string> &want) {
  if (want && config.value(key, "") != *want)
    out.push_back(label + " is " + config.value(key, std::string("?")) + ", expected " + *want);
}

void expect_warnings(std::vector<std::string> &out, const expectation &x,
                     const std::vector<std::string> &warnings) {
  for (const auto &w : x.warnings) {
    bool found = false;
    for (const auto &have : warnings)
      found = found || have.find(w) != std::string::npos;
    if (!found)
      out.push_back("no warning contains '" + w + "'");
  }
  if (x.warning_count && warnings.size() != *x.warning_count)
    out.push_back(std::to_string(warnings.size()) + " warnings, expected " +
                  std::to_string(*x.warning_count));
}

} // namespace

std::vector<std::string> configuration_mismatches(const expectation &x,
                                                  const nlohmann::json &config) {
  std::vector<std::string> out;
  expect_string(out, config, "binding", "binding", x.binding);
  expect_string(out, config, "stream0", "stream 0", x.stream0);
  if (x.fallback && config.value("fallback", false) != *x.fallback)
    out.push_back(std::string("fallback is ") + boolean(config.value("fallback", false)) +
                  ", expected " + boolean(*x.fallback));
  expect_warnings(out, x, config.value("warnings", std::vector<std::string>{}));
  return out;
}

void check_configurations(const record_index &index, const cell_lookup &cells, comparison &out) {
  for (const auto &[id, rec] : index.cells) {
    const cell *c = cells.find(id);
    if (!c)
      continue;
    const auto config = config_of(rec);
    for (const expectation *x : c->expectations)
      for (const auto &what : configuration_mismatches(*x, config))
        out.problems.push_back(
            {"expectation", id, "", what + " (expected by " + x->where.text() + ")"});
  }
}

} // namespace cuparity::verdict
