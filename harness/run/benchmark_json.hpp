// Reading what a [[benchmark]] wrote: pytest-benchmark's and pyperf's JSON, into per-call times.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// One benchmark of the file: its name and the median of its per-call times, in ns.
struct benchmark_timing {
  std::string test;       ///< pytest-benchmark: `fullname` (a node id); pyperf: metadata `name`
  double median_ns = 0;   ///< the median of its values (pytest-benchmark: stats.data, else median)
  std::size_t values = 0; ///< how many values that median is of (1: stats.median alone)
  /// The binding the benchmark says its process really used, "internal" or "nvidia" ("" where it
  /// says none): pytest-benchmark's `extra_info.cuparity_binding`, pyperf's metadata
  /// `cuparity_binding`. A Numba that fell back to ctypes in an NVIDIA cell says so here.
  std::string binding;
  std::string binding_at; ///< the member it came from, for messages
};

/// pytest-benchmark's `--benchmark-json` (5.x): `benchmarks[]`, each with `fullname` and `stats`
/// (`data`, its per-round per-call seconds with --benchmark-save-data, else `median`). Throws
/// json_input_error naming the member ("benchmarks[1].stats.median: ...") for a wrong or missing
/// one, a time that is not positive, a name listed twice, no benchmark at all, or a
/// `cuparity_binding` other than "internal" or "nvidia".
[[nodiscard]] std::vector<benchmark_timing> read_pytest_benchmark(const nlohmann::json &doc);

/// pyperf's `-o` file (pyperf 2.10, format "1.0"): `benchmarks[]`, each with `runs[].values` (per
/// loop iteration, in the benchmark's unit), its name in its own `metadata` or the file's. Runs
/// without values (calibration, warmups only) are skipped. Throws json_input_error as above, and
/// for a unit other than "second" (a size or a count is no time).
[[nodiscard]] std::vector<benchmark_timing> read_pyperf(const nlohmann::json &doc);

/// The file at `path` read as `format`. Throws bad_input_error "<path>: <problem>" for a file that
/// is missing, unreadable or no JSON, and for every problem of the readers above.
[[nodiscard]] std::vector<benchmark_timing> read_benchmark_file(const std::string &path,
                                                                benchmark_format format);

} // namespace cuparity
