// TOML matrices with toml++: strict keys and types, errors with file:line:column, GitHub-style
// include/exclude expansion.
#include "harness/matrix/matrix.hpp"

#include "harness/config/config.hpp"
#include "harness/config/env_vars.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <toml++/toml.h>

namespace cuparity {
namespace fs = std::filesystem;

std::string source_position::text() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string short_variable_name(const std::string &var) {
  static const std::map<std::string, std::string> names{
      {var::use_nvidia_binding, "nv"},    {var::numba_ptds, "numba_ptds"},
      {var::cuda_python_ptds, "cp_ptds"}, {var::driver, "driver"},
      {var::include_path, "include"},     {var::nvidia_backend, "nv_lib"}};
  auto it = names.find(var);
  return it == names.end() ? var : it->second;
}

bool env_matches(const cell_env &when, const cell_env &env) {
  for (const auto &[k, v] : when) {
    auto it = env.find(k);
    env_value have = it == env.end() ? std::nullopt : it->second;
    if (have != v)
      return false;
  }
  return true;
}

namespace {

class reader {
public:
  explicit reader(std::string file) : m_file(std::move(file)) {
    m_dir = fs::absolute(m_file).parent_path().string();
  }

  source_position at(const toml::source_region &r) const {
    return {m_file, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
  }
  source_position at(const toml::node &n) const { return at(n.source()); }

  [[noreturn]] void error(const toml::node &n, const std::string &what) const {
    throw matrix_error(at(n).text() + ": " + what);
  }
  [[noreturn]] void error(const toml::key &k, const std::string &what) const {
    throw matrix_error(at(k.source()).text() + ": " + what);
  }

  /// Only `allowed` keys may appear in `t`.
  void check_keys(const toml::table &t, const std::string &where,
                  std::initializer_list<const char *> allowed) const {
    for (const auto &[k, v] : t) {
      bool ok = false;
      for (const char *a : allowed)
        ok = ok || k.str() == a;
      if (!ok) {
        std::string list;
        for (const char *a : allowed)
          list += std::string(list.empty() ? "" : ", ") + a;
        error(k,
              "unknown key '" + std::string(k.str()) + "' in " + where + " (known: " + list + ")");
      }
    }
  }

  std::string string_of(const toml::node &n, const std::string &what) const {
    if (auto s = n.value<std::string>(); s && n.is_string())
      return *s;
    error(n, what + " must be a string, not " + type_name(n));
  }

  bool bool_of(const toml::node &n, const std::string &what) const {
    if (n.is_boolean())
      return *n.value<bool>();
    error(n, what + " must be true or false, not " + type_name(n));
  }

  double number_of(const toml::node &n, const std::string &what) const {
    if (n.is_integer() || n.is_floating_point())
      return *n.value<double>();
    error(n, what + " must be a number, not " + type_name(n));
  }

  std::vector<std::string> strings_of(const toml::node &n, const std::string &what) const {
    std::vector<std::string> out;
    if (n.is_string())
      return {string_of(n, what)};
    const toml::array *a = n.as_array();
    if (!a)
      error(n, what + " must be a string or an array of strings, not " + type_name(n));
    for (const auto &e : *a)
      out.push_back(string_of(e, what + " element"));
    return out;
  }

  /// A variable's value: a string, an integer (written in decimal), or false (unset).
  env_value value_of(const toml::node &n, const std::string &var) const {
    if (n.is_string())
      return substitute(*n.value<std::string>());
    if (n.is_integer())
      return std::to_string(*n.value<long long>());
    if (n.is_boolean() && !*n.value<bool>())
      return std::nullopt;
    error(n, "value of " + var + " must be a string, an integer or false (= unset), not " +
                 type_name(n));
  }

  std::string substitute(std::string s) const {
    auto replace = [&](const std::string &from, const std::string &to) {
      for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
        s.replace(pos, from.size(), to);
    };
    replace("{bin}", executable_dir());
    replace("{matrix_dir}", m_dir);
    return s;
  }

  void check_variable_name(const toml::key &k, const std::string &name) const {
    static const std::regex form("[A-Z_][A-Z0-9_]*");
    if (!std::regex_match(name, form))
      error(k, "'" + name + "' is not an environment variable name (expected UPPER_CASE)");
  }

  /// A table's entries in file order (toml++ keeps tables sorted by key).
  static std::vector<std::pair<const toml::key *, const toml::node *>>
  in_file_order(const toml::table &t) {
    std::vector<std::pair<const toml::key *, const toml::node *>> out;
    for (const auto &[k, v] : t)
      out.emplace_back(&k, &v);
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
      const auto &x = a.first->source().begin, &y = b.first->source().begin;
      return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    return out;
  }

  static std::string type_name(const toml::node &n) {
    switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
    }
  }

  const std::string &dir() const { return m_dir; }

private:
  std::string m_file;
  std::string m_dir;
};

struct rule {
  cell_env env;
  std::string label;
  source_position where;
  const toml::node *node = nullptr;
};

const toml::table &table_of(const reader &r, const toml::node &n, const std::string &what) {
  if (auto *t = n.as_table())
    return *t;
  r.error(n, what + " must be a table, not " + reader::type_name(n));
}

std::vector<const toml::table *> tables_of(const reader &r, const toml::node &n,
                                           const std::string &what) {
  std::vector<const toml::table *> out;
  const toml::array *a = n.as_array();
  if (!a)
    r.error(n,
            what + " must be an array of tables ([[" + what + "]]), not " + reader::type_name(n));
  for (const auto &e : *a)
    out.push_back(&table_of(r, e, what + " element"));
  return out;
}

/// Reads a rule table: variables (UPPER_CASE keys) plus the lowercase keys in `extra`.
rule read_rule(const reader &r, const toml::table &t, const std::string &what,
               std::initializer_list<const char *> extra) {
  rule out;
  out.where = r.at(t);
  out.node = &t;
  for (const auto &[kp, vp] : reader::in_file_order(t)) {
    const toml::key &k = *kp;
    const toml::node &v = *vp;
    std::string key(k.str());
    if (std::find_if(extra.begin(), extra.end(), [&](const char *e) { return key == e; }) !=
        extra.end())
      continue;
    if (!key.empty() && std::islower(static_cast<unsigned char>(key[0]))) {
      std::string list;
      for (const char *e : extra)
        list += std::string(list.empty() ? "" : ", ") + e;
      r.error(k, "unknown key '" + key + "' in " + what +
                     (list.empty() ? "" : " (known lowercase keys: " + list + ")"));
    }
    r.check_variable_name(k, key);
    out.env[key] = r.value_of(v, key);
  }
  return out;
}

std::string cell_id(const std::vector<std::string> &vars, const cell_env &env) {
  std::string id;
  for (const auto &v : vars) {
    auto it = env.find(v);
    if (it == env.end())
      continue;
    if (!id.empty())
      id += ",";
    id += short_variable_name(v) + "=" + (it->second ? *it->second : "-");
  }
  return id.empty() ? "default" : id;
}

} // namespace

matrix load_matrix(const std::string &path,
                   const std::function<bool(const std::string &)> &known_case) {
  if (!fs::is_regular_file(path))
    throw matrix_error(path + ": no such matrix file");
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error &e) {
    throw matrix_error(path + ":" + std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column) + ": " +
                       std::string(e.description()));
  }
  reader r(path);
  matrix m;
  m.path = path;
  m.name = fs::path(path).stem().string();
  r.check_keys(doc, "the matrix file",
               {"matrix", "axes", "include", "exclude", "expect", "latency"});

  if (auto *n = doc.get("matrix")) {
    const auto &t = table_of(r, *n, "[matrix]");
    r.check_keys(t, "[matrix]",
                 {"name", "description", "cases", "exclude_cases", "case_timeout_s", "baseline"});
    if (auto *v = t.get("name"))
      m.name = r.string_of(*v, "matrix.name");
    if (auto *v = t.get("description"))
      m.description = r.string_of(*v, "matrix.description");
    if (auto *v = t.get("cases")) {
      m.cases = r.strings_of(*v, "matrix.cases");
      for (const auto &c : m.cases)
        if (!known_case(c))
          r.error(*v, "matrix.cases: '" + c + "' names no case (see `cuparity list`)");
    }
    if (auto *v = t.get("exclude_cases")) {
      m.exclude_cases = r.strings_of(*v, "matrix.exclude_cases");
      for (const auto &c : m.exclude_cases)
        if (!known_case(c))
          r.error(*v, "matrix.exclude_cases: '" + c + "' names no case");
    }
    if (auto *v = t.get("case_timeout_s")) {
      double s = r.number_of(*v, "matrix.case_timeout_s");
      if (s <= 0)
        r.error(*v, "matrix.case_timeout_s must be positive");
      m.case_timeout = std::chrono::milliseconds(static_cast<long long>(s * 1000));
    }
    if (auto *v = t.get("baseline")) {
      fs::path b = r.substitute(r.string_of(*v, "matrix.baseline"));
      if (b.is_relative())
        b = fs::path(r.dir()) / b;
      m.baseline = b.lexically_normal().string();
    }
  }

  // ---- axes: the cartesian product, in file order (first axis varies slowest)
  std::vector<std::pair<std::string, std::vector<env_value>>> axes;
  if (auto *n = doc.get("axes")) {
    const auto &t = table_of(r, *n, "[axes]");
    for (const auto &[kp, vp] : reader::in_file_order(t)) {
      const toml::key &k = *kp;
      const toml::node &v = *vp;
      std::string var(k.str());
      r.check_variable_name(k, var);
      const toml::array *values = v.as_array();
      if (!values)
        r.error(v, "axis " + var + " must be an array of values, not " + reader::type_name(v));
      if (values->empty())
        r.error(v, "axis " + var + " has no values: the product would be empty");
      std::vector<env_value> vals;
      for (const auto &e : *values) {
        auto val = r.value_of(e, var);
        if (std::find(vals.begin(), vals.end(), val) != vals.end())
          r.error(e, "axis " + var + " lists a value twice");
        vals.push_back(val);
      }
      axes.emplace_back(var, std::move(vals));
      m.axes.push_back(var);
    }
  }
  std::vector<cell_env> product{cell_env{}};
  for (const auto &[var, vals] : axes) {
    std::vector<cell_env> next;
    for (const auto &partial : product)
      for (const auto &v : vals) {
        auto e = partial;
        e[var] = v;
        next.push_back(std::move(e));
      }
    product = std::move(next);
  }
  if (axes.empty())
    product.clear();

  // ---- exclude: drop every cell matching all keys of a rule (partial match)
  if (auto *n = doc.get("exclude")) {
    for (const toml::table *t : tables_of(r, *n, "exclude")) {
      rule x = read_rule(r, *t, "[[exclude]]", {});
      if (x.env.empty())
        r.error(*t, "an [[exclude]] rule with no variables would drop every cell");
      for (const auto &[k, v] : x.env)
        if (std::find(m.axes.begin(), m.axes.end(), k) == m.axes.end())
          r.error(*t, "[[exclude]] names " + k + ", which is not an axis");
      auto before = product.size();
      std::erase_if(product, [&](const cell_env &e) { return env_matches(x.env, e); });
      if (product.size() == before)
        r.error(*t, "this [[exclude]] rule matches no cell");
    }
  }

  // ---- include: after exclude, never excluded. Extends every cell whose axis values agree
  // with the rule's (without overwriting them); adds a new cell when none does (GitHub Actions
  // semantics).
  std::vector<std::pair<cell_env, std::string>> cells;
  for (auto &e : product)
    cells.emplace_back(std::move(e), "");
  if (auto *n = doc.get("include")) {
    for (const toml::table *t : tables_of(r, *n, "include")) {
      rule inc = read_rule(r, *t, "[[include]]", {"label"});
      if (auto *l = t->get("label"))
        inc.label = r.string_of(*l, "include.label");
      if (inc.env.empty())
        r.error(*t, "an [[include]] rule needs at least one variable");
      bool extended = false;
      for (auto &[env, label] : cells) {
        bool compatible = true;
        for (const auto &[k, v] : inc.env)
          if (std::find(m.axes.begin(), m.axes.end(), k) != m.axes.end()) {
            auto it = env.find(k);
            compatible = compatible && it != env.end() && it->second == v;
          }
        bool adds = false;
        for (const auto &[k, v] : inc.env)
          adds = adds || std::find(m.axes.begin(), m.axes.end(), k) == m.axes.end();
        if (!compatible)
          continue;
        // A rule of axis values alone that matches an existing cell adds nothing (but may
        // label it); otherwise its other variables extend the cell.
        if (adds)
          for (const auto &[k, v] : inc.env)
            env[k] = v;
        if (!inc.label.empty())
          label = inc.label;
        extended = true;
      }
      if (!extended)
        cells.emplace_back(inc.env, inc.label);
    }
  }
  if (cells.empty())
    throw matrix_error(path + ":1:1: the matrix has no cells (no axes, or every cell excluded, "
                              "and no [[include]])");

  // ---- the variables the matrix controls: axes first, then others in first-seen order; every
  // cell names all of them (unset where it does not say), so the runner can clean them.
  m.variables = m.axes;
  for (const auto &[env, label] : cells)
    for (const auto &[k, v] : env)
      if (std::find(m.variables.begin(), m.variables.end(), k) == m.variables.end())
        m.variables.push_back(k);
  std::set<std::string> ids;
  for (auto &[env, label] : cells) {
    cell c;
    for (const auto &v : m.variables)
      c.env[v] = env.count(v) ? env.at(v) : std::nullopt;
    c.label = label;
    c.id = label.empty() ? cell_id(m.variables, env) : label;
    if (!ids.insert(c.id).second)
      throw matrix_error(path + ":1:1: two cells have the id '" + c.id +
                         "' (give the [[include]] a distinct label)");
    m.cells.push_back(std::move(c));
  }

  // ---- expectations
  if (auto *n = doc.get("expect")) {
    for (const toml::table *t : tables_of(r, *n, "expect")) {
      r.check_keys(*t, "[[expect]]",
                   {"when", "label", "binding", "stream0", "fallback", "warnings", "warning_count",
                    "allow"});
      expectation x;
      x.where = r.at(*t);
      if (auto *w = t->get("when"))
        x.when = read_rule(r, table_of(r, *w, "expect.when"), "expect.when", {}).env;
      if (auto *l = t->get("label"))
        x.label = r.string_of(*l, "expect.label");
      if (auto *b = t->get("binding")) {
        x.binding = r.string_of(*b, "expect.binding");
        if (*x.binding != "internal" && *x.binding != "nvidia")
          r.error(*b, "expect.binding must be \"internal\" or \"nvidia\"");
      }
      if (auto *s = t->get("stream0")) {
        x.stream0 = r.string_of(*s, "expect.stream0");
        if (*x.stream0 != "legacy" && *x.stream0 != "per-thread")
          r.error(*s, "expect.stream0 must be \"legacy\" or \"per-thread\"");
      }
      if (auto *f = t->get("fallback"))
        x.fallback = r.bool_of(*f, "expect.fallback");
      if (auto *w = t->get("warnings"))
        x.warnings = r.strings_of(*w, "expect.warnings");
      if (auto *c = t->get("warning_count")) {
        double v = r.number_of(*c, "expect.warning_count");
        if (v < 0)
          r.error(*c, "expect.warning_count must not be negative");
        x.warning_count = static_cast<std::size_t>(v);
      }
      if (auto *a = t->get("allow")) {
        for (const toml::table *at : tables_of(r, *a, "expect.allow")) {
          r.check_keys(*at, "[[expect.allow]]", {"cases", "outcomes", "reason", "link"});
          allowance al;
          al.where = r.at(*at);
          auto *cases = at->get("cases");
          auto *outcomes = at->get("outcomes");
          auto *reason = at->get("reason");
          if (!cases || !outcomes || !reason)
            r.error(*at, "[[expect.allow]] needs cases, outcomes and reason");
          al.cases = r.strings_of(*cases, "allow.cases");
          for (const auto &c : al.cases)
            if (!known_case(c))
              r.error(*cases, "allow.cases: '" + c + "' names no case (see `cuparity list`)");
          for (const auto &o : r.strings_of(*outcomes, "allow.outcomes")) {
            auto parsed = parse_outcome(o);
            if (!parsed)
              r.error(*outcomes, "allow.outcomes: unknown outcome '" + o +
                                     "' (pass fail not_supported resource_error crash timeout "
                                     "error)");
            al.outcomes.push_back(*parsed);
          }
          al.reason = r.string_of(*reason, "allow.reason");
          if (auto *l = at->get("link"))
            al.link = r.string_of(*l, "allow.link");
          x.allow.push_back(std::move(al));
        }
      }
      m.expectations.push_back(std::move(x));
    }
  }
  for (const auto &x : m.expectations) {
    bool matched = false;
    for (const auto &c : m.cells)
      matched = matched || ((!x.label || *x.label == c.label) && env_matches(x.when, c.env));
    if (!matched)
      throw matrix_error(x.where.text() + ": this [[expect]] rule matches no cell");
  }
  for (auto &c : m.cells)
    for (const auto &x : m.expectations)
      if ((!x.label || *x.label == c.label) && env_matches(x.when, c.env))
        c.expectations.push_back(&x);

  // ---- latency phase settings
  if (auto *n = doc.get("latency")) {
    const auto &t = table_of(r, *n, "[latency]");
    r.check_keys(t, "[latency]",
                 {"enabled", "probes", "rounds", "max_rounds", "min_time_s", "target_cv",
                  "regression_threshold", "floor_ns", "fail_on_regression", "thresholds",
                  "processes"});
    auto &l = m.latency;
    l.enabled = true;
    if (auto *v = t.get("enabled"))
      l.enabled = r.bool_of(*v, "latency.enabled");
    if (auto *v = t.get("probes"))
      l.probes = r.strings_of(*v, "latency.probes");
    auto positive = [&](const char *key, double &out) {
      if (auto *v = t.get(key)) {
        out = r.number_of(*v, std::string("latency.") + key);
        if (out <= 0)
          r.error(*v, std::string("latency.") + key + " must be positive");
      }
    };
    double rounds = l.rounds, max_rounds = l.max_rounds;
    positive("rounds", rounds);
    positive("max_rounds", max_rounds);
    positive("min_time_s", l.min_time_s);
    positive("target_cv", l.target_cv);
    positive("regression_threshold", l.regression_threshold);
    positive("floor_ns", l.floor_ns);
    l.rounds = static_cast<int>(rounds);
    l.max_rounds = std::max(l.rounds, static_cast<int>(max_rounds));
    if (auto *v = t.get("fail_on_regression"))
      l.fail_on_regression = r.bool_of(*v, "latency.fail_on_regression");
    if (auto *v = t.get("processes")) {
      const std::string mode = r.string_of(*v, "latency.processes");
      if (mode != "per_round" && mode != "persistent")
        r.error(*v, "latency.processes must be \"per_round\" or \"persistent\"");
      l.persistent = mode == "persistent";
    }
    if (auto *v = t.get("thresholds")) {
      for (const auto &[k, tv] : table_of(r, *v, "latency.thresholds"))
        l.thresholds[std::string(k.str())] = r.number_of(tv, "latency.thresholds value");
    }
  }
  return m;
}

} // namespace cuparity
