// A run's figures for dashboards (cuparity export): the functional phase, each latency series and
// each paired verdict, with the run's matrix, GPU, driver release and revision.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// What every figure of one run shares (summary.json's provenance and matrix).
struct export_context {
  std::string source;         ///< the summary.json read
  std::string results_path;   ///< the results.jsonl beside it (read too, when it exists)
  std::string matrix;         ///< matrix.name
  std::string gpu;            ///< provenance.gpus: one name, "2x NAME" for two alike, else joined
  std::string driver_release; ///< provenance.driver_release ("" in older runs)
  std::string driver_version; ///< provenance.driver_version_text, e.g. "13.0"
  std::string revision;       ///< provenance.git_revision
  std::string started;        ///< the run's start, ISO 8601 UTC
  bool simulated = false;
};

enum class figure_kind { functional_phase, latency_series, paired_ratio };

/// One figure: a value, its bounds where the run has them, and the samples it was taken from.
struct export_figure {
  figure_kind kind = figure_kind::latency_series;
  std::string name;   ///< "<matrix> | <cell> | <probe> | <series>", "<matrix> | functional-phase"
  std::string cell;   ///< "" for the functional phase
  std::string probe;  ///< "" for the functional phase
  std::string series; ///< facade | direct | other; "nvidia/internal" for a paired ratio
  std::string unit;   ///< "s", the probe's unit ("ns", "GB/s"), or "ratio"
  double value = 0;
  std::optional<double> lower, upper;
  std::vector<double> samples; ///< per-round values in `unit` (a latency series), else empty
  std::string verdict;         ///< a paired ratio's verdict (same, faster, slower, ambiguous)
};

/// The figures of one run, in a fixed order: the functional phase, the latency series (probe,
/// then series, by name), the paired ratios (as summary.json lists them).
struct export_run {
  export_context context;
  std::vector<export_figure> figures;
  std::size_t not_measured = 0; ///< paired rows without a ratio (verdict not_measured)
};

/// Reads run `path` (a run directory, a committed one with summary.json.gz, or a summary file)
/// through read_recorded_run, which checks it whole, then the members it does not type itself
/// (functional_wall_s, matrix.name, latency.paired[]), each checked where it is read. Throws
/// summary_input_error naming the file and member, as `cuparity compare` does.
[[nodiscard]] export_run read_export_run(const std::string &path);

/// The figure's name, with " [GPU, driver RELEASE, REVISION12]" after it when `with_context`.
[[nodiscard]] std::string figure_name(const export_run &run, const export_figure &f,
                                      bool with_context);

/// The driver as names show it: the release, else "CUDA <version text>" (runs before
/// driver_release was recorded).
[[nodiscard]] std::string driver_label(const export_context &c);

} // namespace cuparity
