// [[benchmark]] tables: a package's own benchmarks, timed in every cell as latency series.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

namespace cuparity::matrix_detail {

[[nodiscard]] const key_table<external_benchmark> &benchmark_keys();

/// Reads every [[benchmark]] into m.benchmarks: names unique among them, a command that writes
/// {json}. Throws matrix_error at the offending key.
void read_benchmarks(const read_context &ctx, const document_sections &s, matrix &m);

/// After the cells are expanded: a benchmark's environment may not set a variable of the cells.
void check_benchmark_environments(const toml_reader &r, const document_sections &s,
                                  const matrix &m);

} // namespace cuparity::matrix_detail

namespace cuparity {

/// "pytest-benchmark" or "pyperf", as the matrix writes it.
[[nodiscard]] const char *to_string(benchmark_format f);

} // namespace cuparity
