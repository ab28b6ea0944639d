// Where a step summary goes (--summary-md, $GITHUB_STEP_SUMMARY) and writing it once a run ends.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cuparity::cli {

/// A Markdown page's destination: replaced whole, or appended to as GitHub asks of
/// $GITHUB_STEP_SUMMARY.
struct markdown_target {
  std::string path;
  bool append = false;
  std::string what; ///< how messages name it: "--summary-md", "GITHUB_STEP_SUMMARY", "-o"
};

/// `explicit_path` (--summary-md, replaced) wins; else `github_step_summary` when it is set and
/// not empty (appended to), unless `off` (--no-summary-md); else none.
[[nodiscard]] std::optional<markdown_target>
step_summary_target(const std::string &explicit_path, bool off, const char *github_step_summary);

/// The page's byte budget at `t`: step_summary_budget, less what an appended file holds already
/// (GitHub's cap counts everything the step wrote there).
[[nodiscard]] std::size_t markdown_budget(const markdown_target &t);

/// Writes `page` to `t`: replaces the file, or appends to it after a blank line when it holds
/// anything. Throws bad_input_error or output_write_error naming the path.
void write_markdown_text(const markdown_target &t, const std::string &page);

/// Renders `summary` (summary_markdown) within markdown_budget(t) and writes it to `t`. Throws
/// bad_input_error or output_write_error naming the path (harness/io/output_file.hpp).
void write_markdown(const markdown_target &t, const nlohmann::json &summary,
                    const std::string &run_dir);

/// What a run's step summary says when the run ended before its verdict (exit `code`: bad input,
/// environment, a signal): no verdict, and why in a word, for the job's page.
[[nodiscard]] std::string no_verdict_markdown(const std::string &matrix_path, int code);

} // namespace cuparity::cli
