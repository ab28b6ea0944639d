// Reading [[suite]] and [[program]] tables, and what a matrix with them may not also say.
#include "harness/matrix/external_suites.hpp"

#include "harness/matrix/placeholders.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

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

/// `written` with each {env:NAME} replaced by NAME's value in this process's environment.
std::string substitute_environment(const key_value &v, std::string written) {
  const std::string open = "{env:";
  for (auto at = written.find(open); at != std::string::npos; at = written.find(open, at)) {
    const auto close = written.find('}', at);
    const std::string name = written.substr(at + open.size(), close - at - open.size());
    if (close == std::string::npos || name.empty() || name.find_first_of("{=") != name.npos)
      v.fail(in_quotes(written.substr(at)) + " is no {env:NAME} placeholder");
    const char *value = std::getenv(name.c_str());
    if (!value || !*value)
      v.fail("{env:" + name + "}: the variable " + name + " is " + (value ? "empty" : "unset") +
             " in cuparity's environment (set it to the project's source checkout)");
    written.replace(at, close + 1 - at, value);
    at += std::string_view(value).size();
  }
  return written;
}

/// Why `dir` cannot be a suite's root, or nullopt.
std::optional<std::string> not_a_folder(const std::filesystem::path &dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec))
    return std::nullopt;
  return in_quotes(dir.string()) +
         (std::filesystem::exists(dir, ec) ? " is not a folder" : " does not exist");
}

} // namespace

namespace {

/// The placeholder a string names that is neither {bin}, {matrix_dir} nor one of `run_time`, if
/// any; and the list of the known ones, for its message.
std::optional<std::string> unknown_of(std::string written, const std::vector<std::string> &run_time,
                                      std::string &known) {
  known = "{bin}, {matrix_dir}";
  for (const std::string &name : run_time) {
    known += ", " + name;
    for (auto at = written.find(name); at != std::string::npos; at = written.find(name))
      written.erase(at, name.size());
  }
  return unknown_placeholder(written);
}

} // namespace

std::string run_time_text(const key_value &v, std::string written, const std::string &run_time) {
  std::string known;
  if (auto p = unknown_of(written, {"{out}", run_time}, known))
    v.fail("unknown placeholder " + *p + " (known: " + known + ")");
  return substitute_placeholders(std::move(written), v.context().reader.dir());
}

std::map<std::string, std::string> environment_table(const key_value &v,
                                                     const std::vector<std::string> &run_time) {
  std::map<std::string, std::string> out;
  for (const auto &[k, node] : *v.node().as_table()) {
    const std::string name(k.str());
    const auto *text = node.as_string();
    if (!text)
      v.context().reader.error(node, v.key() + "." + name + ": must be a string");
    if (name.empty() || name.find('=') != std::string::npos)
      v.context().reader.error(k, v.key() + ": " + in_quotes(name) + " is no variable name");
    std::string written(text->get()), known;
    if (auto p = unknown_of(written, run_time, known))
      v.context().reader.error(node, v.key() + "." + name + ": unknown placeholder " + *p +
                                         " (known: " + known + ")");
    out[name] = substitute_placeholders(std::move(written), v.context().reader.dir());
  }
  return out;
}

void set_suite_root(external_suite &x, const key_value &v) {
  x.root = root_folder(v, "suite");
}

std::string root_folder(const key_value &v, const std::string &what) {
  namespace fs = std::filesystem;
  const std::string written = v.get<std::string>();
  std::string probe = written;
  for (auto at = probe.find("{env:"); at != std::string::npos; at = probe.find("{env:")) {
    const auto close = probe.find('}', at);
    probe.erase(at, close == std::string::npos ? 5 : close + 1 - at);
  }
  if (auto p = unknown_placeholder(probe))
    v.fail("unknown placeholder " + *p + " (known: {bin}, {matrix_dir}, {env:NAME})");
  fs::path dir =
      substitute_environment(v, substitute_placeholders(written, v.context().reader.dir()));
  if (dir.empty())
    v.fail("is empty");
  if (dir.is_relative())
    dir = fs::path(v.context().reader.dir()) / dir;
  dir = dir.lexically_normal();
  if (auto why = not_a_folder(dir))
    v.fail("the " + what + "'s root " + *why);
  return dir.string();
}

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

namespace cuparity {

std::optional<std::string> apply_suite_roots(matrix &m,
                                             const std::vector<std::string> &assignments) {
  namespace fs = std::filesystem;
  for (const auto &a : assignments) {
    const std::string option = "--suite-root " + matrix_detail::in_quotes(a) + ": ";
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
      return option + "expected NAME=DIR (a [[suite]]'s name and its source checkout)";
    const std::string name = a.substr(0, eq);
    auto it = std::find_if(m.suites.begin(), m.suites.end(),
                           [&](const external_suite &x) { return x.name == name && !x.program; });
    if (it == m.suites.end()) {
      std::string names;
      for (const auto &x : m.suites)
        if (!x.program)
          names += (names.empty() ? "" : ", ") + x.name;
      return option + "no [[suite]] named " + matrix_detail::in_quotes(name) + " in " + m.path +
             " (its suites: " + (names.empty() ? "none" : names) + ")";
    }
    const fs::path dir = fs::absolute(a.substr(eq + 1)).lexically_normal();
    if (auto why = matrix_detail::not_a_folder(dir))
      return option + "the suite's root " + *why;
    it->root = dir.string();
  }
  return std::nullopt;
}

} // namespace cuparity
