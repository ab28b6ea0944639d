// Reading [[benchmark]] tables (docs/configuration.md#benchmarks).
#include "harness/matrix/external_benchmarks.hpp"

#include "harness/matrix/external_suites.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/matrix/placeholders.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>

namespace cuparity::matrix_detail {
namespace {

/// The name starts its probes (`bench:<name>:<test>`) and names a folder in every cell.
void set_name(external_benchmark &x, const key_value &v) {
  x.name = v.get<std::string>();
  if (auto why = unsafe_component(x.name, limits::name_max_bytes))
    v.fail(in_quotes(x.name) + " " + *why + " (the name is a folder of the results)");
  if (x.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    v.fail(in_quotes(x.name) + ": use lowercase letters, digits, '_' and '-' (it starts the probe "
                               "names bench:<name>:<test>, whose parts ':' separates)");
}

/// The runner reads {json}: a command that never names it would leave every cell without one.
void set_command(external_benchmark &x, const key_value &v) {
  if (!v.node().is_array())
    v.fail("must be an array of strings: the program, then its arguments (no shell)");
  for (const auto &arg : v.get<std::vector<std::string>>())
    x.command.push_back(run_time_text(v, arg, "{json}"));
  if (x.command.empty() || x.command.front().empty())
    v.fail("names no program");
  if (std::none_of(x.command.begin(), x.command.end(),
                   [](const std::string &a) { return a.find("{json}") != std::string::npos; }))
    v.fail("names no {json}: the file the runner reads (pytest-benchmark: "
           "--benchmark-json={json}; pyperf: -o {json})");
}

void set_format(external_benchmark &x, const key_value &v) {
  x.format = v.get<std::string>() == "pyperf" ? benchmark_format::pyperf
                                              : benchmark_format::pytest_benchmark;
}

void set_environment(external_benchmark &x, const key_value &v) {
  x.environment = environment_table(v, {"{out}", "{json}"});
}

void set_root(external_benchmark &x, const key_value &v) {
  x.root = root_folder(v, "benchmark");
}

} // namespace

const key_table<external_benchmark> &benchmark_keys() {
  using x = external_benchmark;
  static const key_table<x> keys{
      "[[benchmark]]",
      "benchmark",
      {
          {"name", text().needed(), set_name,
           "the benchmark's name: its probes are bench:<name>:<test>"},
          {"format", choice({"pytest-benchmark", "pyperf"}).needed(), set_format,
           "what {json} holds: pytest-benchmark's --benchmark-json or pyperf's -o"},
          {"command", texts().needed(), set_command,
           "the program and its arguments; {out}: the process's folder, {json}: its JSON file"},
          {"environment", table(), set_environment,
           "VARIABLE = value: set for its processes besides the cell's variables"},
          {"root", text(), set_root,
           "the folder its processes start in; {env:NAME}: a variable of cuparity's environment"},
          {"timeout_s", number_in(1, limits::duration_max_s), assign<&x::timeout_s>,
           "seconds one process may run (default: 600); then it is killed, the cell's error"},
          {"rounds", integer_in(1, 1000), assign<&x::rounds>,
           "processes per cell, interleaved across cells: A B, then B A (default: 3)"},
          {"control", flag(), assign<&x::control>,
           "the A/A control: a second run per cell and round, series control:<cell> (default: "
           "false)"},
      }};
  return keys;
}

void read_benchmarks(const read_context &ctx, const document_sections &s, matrix &m) {
  for (const toml::table *t : s.benchmark) {
    external_benchmark x;
    x.where = ctx.reader.at(*t);
    read_keys(ctx, *t, benchmark_keys(), x);
    for (const auto &other : m.benchmarks)
      if (other.name == x.name)
        ctx.reader.error(*t->get("name"), "benchmark.name: " + in_quotes(x.name) +
                                              " is already the name of the benchmark at " +
                                              other.where.text());
    m.benchmarks.push_back(std::move(x));
  }
}

void check_benchmark_environments(const toml_reader &r, const document_sections &s,
                                  const matrix &m) {
  for (std::size_t i = 0; i < m.benchmarks.size(); ++i)
    for (const auto &[name, _] : m.benchmarks[i].environment)
      if (std::find(m.variables.begin(), m.variables.end(), name) != m.variables.end())
        r.error(*s.benchmark[i]->get("environment"),
                "benchmark.environment: " + in_quotes(name) +
                    " is a variable of the matrix's cells; a benchmark may not override it");
}

} // namespace cuparity::matrix_detail

namespace cuparity {

const char *to_string(benchmark_format f) {
  return f == benchmark_format::pyperf ? "pyperf" : "pytest-benchmark";
}

} // namespace cuparity
