// `cuparity run`'s step summary: its target checked before the run, its page written after it.
#pragma once

#include "harness/cli/step_summary.hpp"
#include "harness/run/runner.hpp"

#include <ctime>
#include <optional>
#include <string>
#include <sys/types.h>

namespace cuparity::cli {

/// A file's identity and last change, to tell a summary.json this run wrote from one it found.
struct file_stamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  timespec mtime{};
};

/// A run's step summary between its check and its writing.
struct pending_step_summary {
  markdown_target target;
  std::string matrix_path;
  std::string out_dir;    ///< where the run writes summary.json ("" when unknown)
  file_stamp old_summary; ///< summary.json there before the run
};

/// Checks `target` before anything runs: check_output_file, a file that can be written, and
/// never one of the run's own outputs (summary.json, junit.xml, results.jsonl). Sets
/// `options.out_dir` to the runner's default when it is empty, so the run and its page agree on
/// the folder. Says why on stderr and returns nullopt when the target cannot be used (exit 2).
[[nodiscard]] std::optional<pending_step_summary>
prepare_step_summary(const markdown_target &target, run_options &options);

/// After the run that ended with `code`: the page of the summary.json it wrote, or a no-verdict
/// page when it wrote none. A page that cannot be written is said on stderr, naming the file and
/// where the run's results are; the run's own code stands, and a run that was 0 becomes 2 (the
/// target refused) or 3 (the file system failed).
[[nodiscard]] int finish_step_summary(const pending_step_summary &pending, int code);

} // namespace cuparity::cli
