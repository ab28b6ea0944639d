// Loading a matrix: parses the file, then reads sections, cells, expectations, latency in order.
#include "harness/matrix/matrix.hpp"

#include "harness/io/sha256.hpp"
#include "harness/matrix/expansion.hpp"
#include "harness/matrix/expectations.hpp"
#include "harness/matrix/external_benchmarks.hpp"
#include "harness/matrix/external_suites.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/matrix/matrix_keys.hpp"
#include "harness/matrix/text.hpp"

#include <filesystem>
#include <fstream>
#include <ostream>

namespace cuparity {
namespace fs = std::filesystem;

std::string source_position::text() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

/// The file's bytes. Read here, not by toml::parse_file, so that the digest is of the very bytes
/// parsed: a file replaced between two reads cannot give one matrix and another's digest.
std::string read_matrix_bytes(const std::string &path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw matrix_error(path + ": is a folder, not a matrix file");
  if (!fs::is_regular_file(path, ec))
    throw matrix_error(path + ": no such matrix file");
  std::ifstream in(path, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), {}};
  if (!in.is_open() || in.bad())
    throw matrix_error(path + ": cannot be read");
  return bytes;
}

toml::table parse_matrix_bytes(const std::string &path, const std::string &bytes) {
  try {
    return toml::parse(bytes, path);
  } catch (const toml::parse_error &e) {
    throw matrix_error(path + ":" + std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column) + ": " +
                       std::string(e.description()));
  }
}

/// [latency]: written at all means enabled, unless it says otherwise.
void read_latency(const matrix_detail::read_context &ctx, const toml::table &t, matrix &m) {
  m.latency.enabled = true;
  read_keys(ctx, t, matrix_detail::latency_keys(), m.latency);
}

/// Each rule is checked against every cell: a bounded number of them keeps loading fast.
void check_rule_counts(const matrix_detail::toml_reader &r,
                       const matrix_detail::document_sections &s) {
  const std::pair<const char *, const std::vector<const toml::table *> *> kinds[] = {
      {"[[include]]", &s.include}, {"[[exclude]]", &s.exclude}, {"[[expect]]", &s.expect}};
  for (const auto &[name, tables] : kinds)
    if (tables->size() > limits::rules_max)
      r.error(*(*tables)[limits::rules_max], std::string("this is ") + name + " rule number " +
                                                 std::to_string(limits::rules_max + 1) +
                                                 "; the most is " +
                                                 std::to_string(limits::rules_max));
}

/// A name from the file's stem names the results' folder as [matrix] name would: it must be as
/// safe ("...toml" would give "..").
void check_stem_name(const matrix_detail::toml_reader &r, const std::string &name) {
  if (auto why = matrix_detail::unsafe_component(name, limits::name_max_bytes))
    throw matrix_error(r.file() + ":1:1: the matrix's name " + matrix_detail::in_quotes(name) +
                       ", taken from its file name, " + *why + ": give it a [matrix] name");
}

} // namespace

matrix load_matrix(const std::string &path, const name_check &known_case,
                   const name_check &known_probe) {
  using namespace matrix_detail;
  const std::string bytes = read_matrix_bytes(path);
  const toml::table doc = parse_matrix_bytes(path, bytes);
  const toml_reader r(path);
  const name_check any = [](const std::string &) { return true; };
  const read_context ctx{r, known_case, known_probe ? known_probe : any};
  document_sections s;
  read_keys(ctx, doc, document_keys(), s);
  check_rule_counts(r, s);

  matrix m;
  m.path = path;
  m.digest = "sha256:" + sha256_hex(bytes);
  m.name = fs::path(path).stem().string();
  if (s.settings)
    read_keys(ctx, *s.settings, matrix_keys(), m);
  if (!s.settings || !s.settings->contains("name"))
    check_stem_name(r, m.name);
  read_suites(ctx, s, m);
  read_benchmarks(ctx, s, m);
  expand_cells(ctx, s, m);
  check_suite_environments(r, s, m);
  check_benchmark_environments(r, s, m);
  // Expectations and allowances may name a suite's tests, which no registry knows beforehand.
  const name_check known_here = with_suite_cases(m, known_case);
  const read_context expect_ctx{r, known_here, ctx.known_probe};
  read_expectations(expect_ctx, s.expect, m);
  if (s.latency)
    read_latency(ctx, *s.latency, m);
  return m;
}

std::optional<matrix> load_matrix_reporting(const std::string &path, const name_check &known_case,
                                            const name_check &known_probe, std::ostream &err,
                                            std::string_view command) {
  try {
    return load_matrix(path, known_case, known_probe);
  } catch (const matrix_error &e) {
    err << "cuparity" << (command.empty() ? "" : " ") << command << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

std::optional<matrix> load_matrix_reporting(const std::string &path, const name_check &known_case,
                                            std::ostream &err, std::string_view command) {
  return load_matrix_reporting(path, known_case, {}, err, command);
}

} // namespace cuparity
