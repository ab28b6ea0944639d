// The step summary: a finished run's verdict as Markdown for a CI job's page (GitHub's
// $GITHUB_STEP_SUMMARY, or any file), rendered from summary.json's computed verdicts alone.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// GitHub's limit on what one step writes to $GITHUB_STEP_SUMMARY; over it GitHub shows none.
inline constexpr std::size_t step_summary_cap = std::size_t{1} << 20;
/// What one page may take: the cap less room for what else the step writes.
inline constexpr std::size_t step_summary_budget = std::size_t{900} << 10;
/// Below this budget a page is its title and verdict line only.
inline constexpr std::size_t step_summary_compact_below = std::size_t{8} << 10;

struct markdown_options {
  std::size_t budget = step_summary_budget; ///< the page's bytes at most
  std::string run_dir;                      ///< where summary.json and junit.xml are, for notes
};

/// The page (docs/formats.md#the-step-summary): the verdict (SIMULATED marked), the outcome
/// counts per cell, the failing cases with their cells and messages, divergences, the problems
/// no case carries, suites that could not run or stopped, and the latency verdicts (slower,
/// faster, ambiguous first). Every word the run's verdict decided is read from `summary` as
/// written; nothing is judged again. Text from the run (messages, ids, names) is cut and escaped
/// (markdown_text.hpp). A list that would take the page past `budget` stops, saying how many of
/// it were left out; under step_summary_compact_below it is the title and verdict line alone,
/// and "" when not even they fit. Members of the wrong kind read as absent: it never throws for
/// the summary's content.
[[nodiscard]] std::string summary_markdown(const nlohmann::json &summary,
                                           const markdown_options &options);

} // namespace cuparity
