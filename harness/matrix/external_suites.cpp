// Reading [[suite]] and [[program]] tables, and what a matrix with them may not also say.
#include "harness/matrix/external_suites.hpp"

#include "harness/matrix/text.hpp"

#include <algorithm>

namespace cuparity::matrix_detail {
namespace {

/// Built-in cases and external suites are judged from different evidence (a cuparity cell
/// reports its own configuration; a suite's comes from its captured map), so one matrix does not
/// mix them, and a suite matrix has no probes to time.
void refuse_beside_suites(const read_context &ctx, const document_sections &s) {
  const std::string why = " cannot be set in a matrix with [[suite]] or [[program]] tables (which "
                          "run instead of the built-in cases; put those in a matrix of their own)";
  if (s.settings)
    for (const char *key : {"cases", "exclude_cases", "case_timeout_s"})
      if (const toml::node *n = s.settings->get(key))
        ctx.reader.error(*n, std::string("matrix.") + key + why);
  if (s.latency)
    ctx.reader.error(*s.latency, "[latency]" + why);
}

/// The [[suite]] tables, then the [[program]] tables: the order m.suites holds them in.
std::vector<const toml::table *> suite_tables(const document_sections &s) {
  std::vector<const toml::table *> out = s.suite;
  out.insert(out.end(), s.program.begin(), s.program.end());
  return out;
}

const char *kind_of(const external_suite &x) {
  return x.program ? "program" : "suite";
}

} // namespace

void read_suites(const read_context &ctx, const document_sections &s, matrix &m) {
  if (s.suite.empty() && s.program.empty())
    return;
  refuse_beside_suites(ctx, s);
  for (const toml::table *t : suite_tables(s)) {
    external_suite x;
    x.where = ctx.reader.at(*t);
    // A program is one process and one case: a failure is re-run only when the matrix says so.
    x.program = m.suites.size() >= s.suite.size();
    if (x.program)
      x.retries = 0;
    read_keys(ctx, *t, x.program ? program_keys() : suite_keys(), x);
    // Names share one space: each names its case ids and its folder in every cell.
    for (const auto &other : m.suites)
      if (other.name == x.name)
        ctx.reader.error(*t->get("name"), std::string(kind_of(x)) + ".name: " + in_quotes(x.name) +
                                              " is already the name of the " + kind_of(other) +
                                              " at " + other.where.text());
    m.suites.push_back(std::move(x));
  }
  m.cases.clear(); // no built-in case runs beside suites
}

void check_suite_environments(const toml_reader &r, const document_sections &s, const matrix &m) {
  const std::vector<const toml::table *> tables = suite_tables(s);
  for (std::size_t i = 0; i < m.suites.size(); ++i)
    for (const auto &[name, _] : m.suites[i].environment)
      if (std::find(m.variables.begin(), m.variables.end(), name) != m.variables.end())
        r.error(*tables[i]->get("environment"), std::string(kind_of(m.suites[i])) +
                                                    ".environment: " + in_quotes(name) +
                                                    " is a variable of the matrix's cells; a " +
                                                    kind_of(m.suites[i]) + " may not override it");
}

name_check with_suite_cases(const matrix &m, const name_check &known) {
  if (m.suites.empty())
    return known;
  std::vector<std::string> names;
  for (const auto &x : m.suites)
    names.push_back(x.name);
  return [names, known](const std::string &glob) {
    for (const auto &n : names)
      if (glob == n || glob.rfind(n + ".", 0) == 0)
        return true;
    return known(glob);
  };
}

} // namespace cuparity::matrix_detail
