// Loading a matrix: parses the file, then reads sections, cells, expectations, latency in order.
#include "harness/matrix/matrix.hpp"

#include "harness/matrix/expansion.hpp"
#include "harness/matrix/expectations.hpp"
#include "harness/matrix/matrix_keys.hpp"

#include <filesystem>
#include <ostream>

namespace cuparity {
namespace fs = std::filesystem;

std::string source_position::text() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

toml::table parse_matrix_file(const std::string &path) {
  if (!fs::is_regular_file(path))
    throw matrix_error(path + ": no such matrix file");
  try {
    return toml::parse_file(path);
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

} // namespace

matrix load_matrix(const std::string &path,
                   const std::function<bool(const std::string &)> &known_case) {
  using namespace matrix_detail;
  const toml::table doc = parse_matrix_file(path);
  const toml_reader r(path);
  const read_context ctx{r, known_case};
  document_sections s;
  read_keys(ctx, doc, document_keys(), s);

  matrix m;
  m.path = path;
  m.name = fs::path(path).stem().string();
  if (s.settings)
    read_keys(ctx, *s.settings, matrix_keys(), m);
  expand_cells(ctx, s, m);
  read_expectations(ctx, s.expect, m);
  if (s.latency)
    read_latency(ctx, *s.latency, m);
  return m;
}

std::optional<matrix>
load_matrix_reporting(const std::string &path,
                      const std::function<bool(const std::string &)> &known_case, std::ostream &err,
                      std::string_view command) {
  try {
    return load_matrix(path, known_case);
  } catch (const matrix_error &e) {
    err << "cuparity" << (command.empty() ? "" : " ") << command << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

} // namespace cuparity
