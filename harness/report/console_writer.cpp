// The console table's cell rows, groups, problems, divergences and final verdict line.
#include "harness/report/console_writer.hpp"

#include "harness/report/binding_text.hpp"
#include "harness/report/breakdown.hpp"
#include "harness/report/record_view.hpp"
#include "harness/report/summary.hpp"
#include "harness/report/terminal_text.hpp"

#include <cctype>
#include <iomanip>
#include <map>

namespace cuparity {
namespace {

/// The index of a group in the comparison's (sorted) order: its "G<n>" name in the table.
std::size_t group_index(const comparison &c, const std::string &group) {
  std::size_t gi = 0;
  for (const auto &[key, members] : c.groups) {
    if (key == group)
      break;
    ++gi;
  }
  return gi;
}

void print_header(std::ostream &out, bool simulated, int width) {
  if (simulated)
    out << "*** SIMULATED DRIVER: these results describe cuparity's CPU stand-in, not a GPU ***\n";
  out << std::left << std::setw(width) << "cell"
      << "  binding   stream0     "
      << "pass  fail  n/s  other  group\n";
}

/// One cell's row; true when the cell fell back from nvidia (its binding is marked *).
bool print_cell_row(std::ostream &out, const cell &mc, int width,
                    const std::map<std::string, cell_view> &cells, const comparison &c) {
  auto it = cells.find(mc.id);
  out << std::left << std::setw(width) << mc.id << "  ";
  if (it == cells.end()) {
    out << "(not run)\n";
    return false;
  }
  const auto cfg = it->second.record.value("config", nlohmann::json::object());
  auto n = outcome_counts(it->second);
  const int other =
      static_cast<int>(it->second.cases.size()) - n["pass"] - n["fail"] - n["not_supported"];
  std::string binding = cfg.value("binding", "?") + (cfg.value("fallback", false) ? "*" : "");
  out << std::setw(10) << binding << std::setw(12) << cfg.value("stream0", "?") << std::right
      << std::setw(4) << n["pass"] << std::setw(6) << n["fail"] << std::setw(5)
      << n["not_supported"] << std::setw(7) << other << "  " << std::left;
  out << "G" << group_index(c, group_of(c, mc.id)) << "\n";
  return cfg.value("fallback", false);
}

void print_groups(std::ostream &out, const comparison &c, bool any_fallback) {
  std::size_t gi = 0;
  for (const auto &[key, members] : c.groups)
    out << "  G" << gi++ << ": " << key << " (" << members.size() << " cells)\n";
  if (any_fallback) // the legend of the * only where a row carries one
    out << "  (* = fallback from nvidia)\n";
}

void print_findings(std::ostream &out, const comparison &c) {
  for (const auto &p : c.problems)
    out << "PROBLEM " << p.kind << (p.cell.empty() ? "" : " [" + terminal_text(p.cell) + "]")
        << (p.case_id.empty() ? "" : " " + terminal_text(p.case_id)) << ": "
        << terminal_text(p.message) << "\n";
  for (const auto &d : c.divergences) {
    out << "DIVERGENCE " << terminal_text(d.case_id) << " " << terminal_text(d.key) << " in "
        << terminal_text(d.group) << ":\n";
    for (const auto &[cell, v] : d.values)
      out << "    " << terminal_text(cell) << ": " << terminal_text(v.dump()) << "\n";
    for (const auto &line : binding_difference_lines(d))
      out << "    bound apart: " << terminal_text(line) << "\n";
  }
  // Suites and programs: what each variable changed of what their packages bound.
  if (c.variable_effects)
    for (const auto &e : *c.variable_effects) {
      const auto lines = variable_effect_lines(e, 20);
      out << "VARIABLE " << terminal_text(lines.front()) << "\n";
      for (std::size_t i = 1; i < lines.size(); ++i)
        out << "    " << terminal_text(lines[i]) << "\n";
    }
}

/// Suites and programs: one line per (cell, suite), what it collected, recorded and cost.
void print_suites(std::ostream &out, const comparison &c) {
  if (!c.suites)
    return;
  for (const auto &s : *c.suites) {
    out << (s.program ? "PROGRAM " : "SUITE ") << terminal_text(s.suite)
        << " cell=" << terminal_text(s.cell);
    if (s.error) {
      out << " could not run (its cell_error above)\n";
      continue;
    }
    if (!s.program) // a program collects nothing: its one case is its run
      out << " collected " << (s.collected ? std::to_string(*s.collected) : "?") << ",";
    out << " recorded " << s.tests << ", " << s.process_count
        << (s.process_count == 1 ? " process" : " processes");
    if (s.environment)
      out << "; environment broken (" << s.environment->count << " alike"
          << (s.environment->stopped ? ", " + std::to_string(s.environment->not_run) + " not run"
                                     : "")
          << ")";
    if (s.budget)
      out << "; failure budget stopped it (" << s.budget->not_run << " not run)";
    out << "\n";
  }
}

/// Changes against the reference: the first 40 in full, then how many more (summary.json has all).
/// With fail_on_change those no known change accepts are problems too, and the PROBLEM lines say
/// so; known ones say why they are known.
void print_changes(std::ostream &out, const run_outputs &run) {
  const auto &changes = run.verdict.changes;
  if (!run.m.reference)
    return;
  out << "changes against the reference: " << changes.size()
      << (run.m.fail_on_change ? " (fail_on_change: each fails the run)"
                               : " (reported, not failed)")
      << "\n";
  constexpr std::size_t shown = 40;
  for (std::size_t i = 0; i < changes.size() && i < shown; ++i)
    out << "  CHANGE " << terminal_text(change_text(changes[i]))
        << (changes[i].known.empty() ? "" : " (known: " + terminal_text(changes[i].known) + ")")
        << "\n";
  if (changes.size() > shown)
    out << "  ... and " << changes.size() - shown << " more in summary.json\n";
  for (const auto &k : run.verdict.stale_known)
    out << "  STALE " << terminal_text(stale_known_text(k)) << "\n";
}

/// "paired 44 same, 4 slower": how many verdicts of a latency list read each way.
std::string verdict_counts(const std::string &label, const nlohmann::json &list) {
  std::map<std::string, int> count;
  for (const auto &v : list)
    ++count[v.value("verdict", "?")];
  std::string text;
  for (const auto &[verdict, n] : count)
    text += (text.empty() ? " " : ", ") + std::to_string(n) + " " + verdict;
  return text.empty() ? "" : label + text;
}

/// The latency phase's verdicts on the last line, beside the functional ones: a series that read
/// slower must not hide behind "EQUIVALENT" (which, without fail_on_regression, it does not fail).
std::string latency_headline(const run_outputs &run) {
  const nlohmann::json &lat = run.facts.latency;
  if (!lat.is_object())
    return "";
  std::string parts;
  for (const auto &[key, label] :
       {std::pair{"paired", "paired"}, std::pair{"comparisons", "across processes"},
        std::pair{"baseline", "against the baseline"}})
    if (const auto text = verdict_counts(label, lat.value(key, nlohmann::json::array()));
        !text.empty())
      parts += (parts.empty() ? "" : "; ") + text;
  if (parts.empty())
    parts = "no verdict";
  bool moved = false;
  for (const char *key : {"paired", "comparisons", "baseline"})
    for (const auto &v : lat.value(key, nlohmann::json::array())) {
      const std::string verdict = v.value("verdict", "");
      moved = moved || verdict == "slower" || verdict == "faster" || verdict == "regression";
    }
  if (moved && !run.m.latency.fail_on_regression)
    parts += " (reported, not failed: fail_on_regression = false)";
  return "; latency phase: " + parts;
}

void print_verdict(std::ostream &out, const run_outputs &run) {
  const auto &c = run.verdict;
  if (!c.coverage.complete())
    out << "INCOMPLETE: " << terminal_text(coverage_message(c.coverage)) << "\n";
  std::string name = verdict_name(c, run.facts);
  for (char &ch : name)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  out << "cuparity: " << run.m.name << ": " << c.results << " results in " << run.m.cells.size()
      << " cells, " << c.groups.size() << " semantic groups; " << c.problems.size() << " problems, "
      << c.divergences.size() << " divergences, " << c.allowed << " allowed non-passes"
      << (c.flaky_excused ? " (" + std::to_string(c.flaky_excused) + " flaky, excused)" : "")
      << "; functional phase " << std::fixed << std::setprecision(1) << run.facts.functional_wall_s
      << " s" << latency_headline(run) << ": "
      << (name == "ENVIRONMENT" ? "ENVIRONMENT PROBLEM" : name) << "\n";
}

} // namespace

void console_writer::write(const run_outputs &run) {
  const auto cells = by_cell(run.records);
  std::size_t width = 4;
  for (const auto &mc : run.m.cells)
    width = std::max(width, mc.id.size());
  print_header(m_out, run.facts.provenance.value("simulated", false), static_cast<int>(width));
  bool any_fallback = false;
  for (const auto &mc : run.m.cells)
    any_fallback =
        print_cell_row(m_out, mc, static_cast<int>(width), cells, run.verdict) || any_fallback;
  print_groups(m_out, run.verdict, any_fallback);
  print_suites(m_out, run.verdict);
  print_findings(m_out, run.verdict);
  if (run.facts.latency.is_object())
    print_latency(m_out, run.m, run.facts.latency);
  print_changes(m_out, run);
  m_out << breakdown_text(breakdown_of(run.records, run.facts.functional_wall_s));
  print_verdict(m_out, run);
}

void print_console(std::ostream &out, const matrix &m, const std::vector<nlohmann::json> &records,
                   const comparison &c, const run_facts &facts) {
  console_writer(out).write({m, records, c, facts});
}

} // namespace cuparity
