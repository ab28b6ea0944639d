// The step summary's sections, each read from summary.json as the run wrote it.
#include "harness/report/summary_markdown.hpp"

#include "harness/protocol/outcome.hpp"
#include "harness/report/markdown_page.hpp"
#include "harness/report/markdown_text.hpp"
#include "harness/report/summary_markdown_latency.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace cuparity {
namespace {

using json = nlohmann::json;
namespace ln = lenient;

/// Kept for the notes of lists that did not fit and the closing line.
constexpr std::size_t notes_reserve = 4096;

std::string upper(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string verdict_word(const json &s) {
  const std::string v = ln::text(s, "verdict");
  return v.empty() ? "NO VERDICT" : markdown_inline(upper(v), 40);
}

std::string title_line(const json &s) {
  const bool simulated = ln::flag(ln::object(s, "provenance"), "simulated");
  return "## cuparity: " + markdown_inline(ln::text(ln::object(s, "matrix"), "name")) + " — " +
         verdict_word(s) + (simulated ? " (SIMULATED DRIVER)" : "");
}

std::string verdict_line(const json &s) {
  std::string line = "**" + verdict_word(s) + "** (exit " + ln::figure(s, "exit_code", "%.0f") +
                     "): " + ln::figure(s, "results_count", "%.0f") + " results in " +
                     std::to_string(ln::array(s, "cells").size()) + " cells; " +
                     std::to_string(ln::array(s, "problems").size()) + " problems, " +
                     std::to_string(ln::array(s, "divergences").size()) + " divergences, " +
                     ln::figure(s, "allowed", "%.0f") + " allowed non-passes";
  if (const auto f = ln::number(s, "flaky_excused"); f && *f > 0)
    line += ", " + ln::figure(s, "flaky_excused", "%.0f") + " flaky tests excused";
  if (ln::number(s, "functional_wall_s"))
    line += "; functional phase " + ln::figure(s, "functional_wall_s", "%.1f") + " s";
  if (const std::string shard = ln::text(s, "shard"); !shard.empty())
    line += "; shard " + markdown_inline(shard, 40);
  return line + ".";
}

std::string provenance_line(const json &s) {
  const json &p = ln::object(s, "provenance");
  std::vector<std::string> parts;
  const std::string version = ln::text(p, "driver_version_text");
  const std::string release = ln::text(p, "driver_release");
  if (!version.empty() || !release.empty())
    parts.push_back("driver " + markdown_inline(version.empty() ? "?" : version, 40) +
                    (release.empty() ? "" : " (" + markdown_inline(release, 80) + ")"));
  std::string gpus;
  for (const auto &g : ln::array(p, "gpus"))
    if (g.is_string())
      gpus += (gpus.empty() ? "" : ", ") + g.get<std::string>();
  if (!gpus.empty())
    parts.push_back("GPU " + markdown_inline(gpus));
  if (const std::string rev = ln::text(p, "git_revision"); !rev.empty())
    parts.push_back("cuparity " + markdown_inline(ln::text(p, "cuparity_version"), 40) + " at " +
                    markdown_inline(rev.substr(0, 12), 12) +
                    (ln::flag(p, "git_dirty") ? " (dirty)" : ""));
  if (const std::string started = ln::text(s, "started"); !started.empty())
    parts.push_back("started " + markdown_inline(started, 40));
  std::string line;
  for (const auto &part : parts)
    line += (line.empty() ? "" : " · ") + part;
  return line;
}

void header(markdown_page &page, const json &s) {
  (void)page.add(title_line(s));
  if (ln::flag(ln::object(s, "provenance"), "simulated"))
    (void)page.add("\n> [!WARNING]\n> **SIMULATED DRIVER**: no GPU driver was under test; these "
                   "results describe cuparity's CPU stand-in, not a GPU.");
  (void)page.add("\n" + verdict_line(s));
  if (const std::string p = provenance_line(s); !p.empty())
    (void)page.add("\n" + p);
  const json &coverage = ln::object(s, "coverage");
  if (coverage.contains("complete") && !ln::flag(coverage, "complete"))
    (void)page.add("\n**Incomplete:** " +
                   markdown_inline(ln::text(coverage, "message"), markdown_message_chars));
}

/// The outcomes any cell counts: in the order outcome.hpp lists them, then any other name.
std::vector<std::string> outcome_columns(const json &cells) {
  std::set<std::string> present;
  for (const auto &c : cells)
    for (const auto &[name, n] : ln::object(c, "counts").items())
      present.insert(name);
  std::vector<std::string> out;
  for (int o = 0; o <= static_cast<int>(outcome::flaky); ++o)
    if (present.erase(std::string(to_string(static_cast<outcome>(o)))))
      out.emplace_back(to_string(static_cast<outcome>(o)));
  out.insert(out.end(), present.begin(), present.end());
  return out;
}

std::string cell_row(const json &c, const std::vector<std::string> &columns) {
  std::string row = "| " + markdown_inline(ln::text(c, "id")) + " | ";
  const json &config = ln::object(c, "config");
  if (config.empty())
    row += "not run | |";
  else
    row += markdown_inline(ln::text(config, "binding"), 40) +
           (ln::flag(config, "fallback") ? " (fallback)" : "") + " | " +
           markdown_inline(ln::text(config, "stream0"), 40) + " |";
  const json &counts = ln::object(c, "counts");
  for (const auto &name : columns)
    row += " " +
           (ln::number(counts, name.c_str()) ? ln::figure(counts, name.c_str(), "%.0f") : "0") +
           " |";
  return row;
}

void cells_table(markdown_page &page, const json &s) {
  const json &cells = ln::array(s, "cells");
  const auto columns = outcome_columns(cells);
  std::string header = "| cell | binding | stream0 |";
  for (const auto &name : columns)
    header += " " + markdown_inline(name, 40) + " |";
  page.table(
      "### Cells", header, cells.size(), [&](std::size_t i) { return cell_row(cells[i], columns); },
      "cells");
}

std::vector<std::size_t> problems_with_case(const json &problems, bool with_case) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (ln::text(problems[i], "case").empty() != with_case)
      out.push_back(i);
  return out;
}

void problem_tables(markdown_page &page, const json &s) {
  const json &problems = ln::array(s, "problems");
  const auto cases = problems_with_case(problems, true);
  page.table(
      "### Failing cases", "| cell | case | problem | message |", cases.size(),
      [&](std::size_t i) {
        const json &p = problems[cases[i]];
        return "| " + markdown_inline(ln::text(p, "cell")) + " | " +
               markdown_inline(ln::text(p, "case")) + " | " +
               markdown_inline(ln::text(p, "kind"), 40) + " | " +
               markdown_inline(ln::text(p, "message"), markdown_message_chars) + " |";
      },
      "failing cases");
  const auto run = problems_with_case(problems, false);
  page.table(
      "### Problems no case carries", "| problem | cell | message |", run.size(),
      [&](std::size_t i) {
        const json &p = problems[run[i]];
        return "| " + markdown_inline(ln::text(p, "kind"), 40) + " | " +
               markdown_inline(ln::text(p, "cell")) + " | " +
               markdown_inline(ln::text(p, "message"), markdown_message_chars) + " |";
      },
      "problems");
}

void divergence_table(markdown_page &page, const json &s) {
  const json &divergences = ln::array(s, "divergences");
  page.table(
      "### Divergences", "| case | key | group | values |", divergences.size(),
      [&](std::size_t i) {
        const json &d = divergences[i];
        std::string values;
        for (const auto &[cell, v] : ln::object(d, "values").items()) {
          values += (values.empty() ? "" : "; ") + cell + ": " +
                    v.dump(-1, ' ', false, json::error_handler_t::replace);
          if (values.size() > 4 * markdown_message_chars)
            break; // cut below anyway
        }
        return "| " + markdown_inline(ln::text(d, "case")) + " | " +
               markdown_inline(ln::text(d, "key")) + " | " + markdown_inline(ln::text(d, "group")) +
               " | " + markdown_inline(values, markdown_message_chars) + " |";
      },
      "divergences");
}

/// What a suite's end recorded that stopped it or kept it from running; "" when it ran through.
std::string suite_trouble(const json &e) {
  if (const std::string error = ln::text(e, "error"); !error.empty())
    return "could not run: " + error;
  if (const json &env = ln::object(e, "environment"); !env.empty())
    return "its environment is broken: " + ln::figure(env, "count", "%.0f") +
           " tests failed with one message (" + ln::figure(env, "not_run", "%.0f") +
           " not run): " + ln::text(env, "message");
  if (const json &budget = ln::object(e, "budget"); !budget.empty())
    return "stopped by its failure budget: " + ln::figure(budget, "failures", "%.0f") +
           " failures, max_fails " + ln::figure(budget, "max_fails", "%.0f") + ", " +
           ln::figure(budget, "not_run", "%.0f") + " tests not run";
  return "";
}

void suites_table(markdown_page &page, const json &s) {
  const json &suites = ln::array(s, "suites");
  std::vector<std::size_t> troubled;
  for (std::size_t i = 0; i < suites.size(); ++i)
    if (!suite_trouble(suites[i]).empty())
      troubled.push_back(i);
  page.table(
      "### Suites that could not run or stopped", "| cell | suite | what happened |",
      troubled.size(),
      [&](std::size_t i) {
        const json &e = suites[troubled[i]];
        return "| " + markdown_inline(ln::text(e, "cell")) + " | " +
               markdown_inline(ln::text(e, "suite")) + " | " +
               markdown_inline(suite_trouble(e), markdown_message_chars) + " |";
      },
      "suites");
}

void changes_line(markdown_page &page, const json &s) {
  const json &changes = ln::object(s, "changes");
  if (changes.empty())
    return;
  const json &list = ln::array(changes, "changes");
  const auto known = std::count_if(list.begin(), list.end(),
                                   [](const json &c) { return !ln::text(c, "known").empty(); });
  (void)page.add("\n**Changes against the reference:** " + std::to_string(list.size()) + " (" +
                 std::to_string(known) + " accepted by a known change); fail_on_change = " +
                 (ln::flag(changes, "fail_on_change") ? "true" : "false") +
                 ". Each is in summary.json's `changes`.");
}

} // namespace

std::string summary_markdown(const nlohmann::json &summary, const markdown_options &options) {
  if (options.budget < step_summary_compact_below) {
    const std::string text = title_line(summary) + "\n\n" + verdict_line(summary) + "\n";
    return text.size() <= options.budget ? text : "";
  }
  markdown_page page(options.budget, notes_reserve);
  header(page, summary);
  cells_table(page, summary);
  problem_tables(page, summary);
  divergence_table(page, summary);
  suites_table(page, summary);
  changes_line(page, summary);
  latency_markdown(page, summary.is_object() && summary.contains("latency") ? summary["latency"]
                                                                            : json());
  page.note(std::string("\n") + "Every result is in summary.json and junit.xml" +
            (options.run_dir.empty() ? "" : " in " + markdown_inline(options.run_dir)) + ".");
  return page.text();
}

} // namespace cuparity
