// The step summary's destination and budget; the page itself is harness/report/summary_markdown.
#include "harness/cli/step_summary.hpp"

#include "harness/io/output_append.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/markdown_text.hpp"
#include "harness/report/summary_markdown.hpp"

#include <fstream>

namespace cuparity::cli {

std::optional<markdown_target> step_summary_target(const std::string &explicit_path, bool off,
                                                   const char *github_step_summary) {
  if (!explicit_path.empty())
    return markdown_target{explicit_path, false, "--summary-md"};
  if (off || github_step_summary == nullptr || *github_step_summary == '\0')
    return std::nullopt;
  return markdown_target{github_step_summary, true, "GITHUB_STEP_SUMMARY"};
}

std::size_t markdown_budget(const markdown_target &t) {
  const std::size_t held = t.append ? output_file_size(t.path) : 0;
  return held < step_summary_budget ? step_summary_budget - held : 0;
}

void write_markdown_text(const markdown_target &t, const std::string &page) {
  if (!t.append) {
    write_output_file(t.path, page, t.what);
    return;
  }
  // A blank line first, so the page's heading starts a block whatever the step wrote before.
  const std::size_t held = output_file_size(t.path);
  std::string last(1, '\n');
  if (held > 0)
    std::ifstream(t.path, std::ios::binary).seekg(-1, std::ios::end).read(last.data(), 1);
  append_output_file(t.path, held == 0 ? page : (last == "\n" ? "\n" : "\n\n") + page, t.what);
}

void write_markdown(const markdown_target &t, const nlohmann::json &summary,
                    const std::string &run_dir) {
  // Two bytes of the budget for the blank line an append may put first.
  const std::size_t budget = markdown_budget(t);
  write_markdown_text(t, summary_markdown(summary, {budget > 2 ? budget - 2 : 0, run_dir}));
}

std::string no_verdict_markdown(const std::string &matrix_path, int code) {
  const char *why = code == exit_code::bad_input     ? "bad input"
                    : code == exit_code::environment ? "an environment problem"
                    : code == exit_code::interrupted ? "interrupted (SIGINT)"
                    : code == exit_code::terminated  ? "terminated (SIGTERM)"
                    : code == exit_code::hung_up     ? "hung up (SIGHUP)"
                                                     : "no summary.json written";
  return "## cuparity: " + markdown_inline(matrix_path, markdown_name_chars) +
         " — NO VERDICT\n\n`cuparity run` ended with exit " + std::to_string(code) + " (" + why +
         ") before writing a verdict: the job's log says why; `--resume` completes an "
         "interrupted run.\n";
}

} // namespace cuparity::cli
