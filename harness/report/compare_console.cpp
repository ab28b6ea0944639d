// The console report of `cuparity compare`: what a person reads of run B against run A.
#include "harness/report/run_comparison.hpp"
#include "harness/report/terminal_text.hpp"
#include "harness/report/text_table.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace cuparity {
namespace {

std::string fixed(double v, const char *format) {
  if (!std::isfinite(v))
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string outcome_text(const std::optional<outcome> &o) {
  return o ? std::string(to_string(*o)) : "-";
}

void print_runs(std::ostream &out, const run_comparison &c) {
  for (const auto *h : {&c.a, &c.b})
    out << (h == &c.a ? "A: " : "B: ") << terminal_text(h->source) << " ("
        << terminal_text(h->verdict) << (h->simulated ? ", SIMULATED" : "") << ")\n";
}

void print_outcomes(std::ostream &out, const run_comparison &c) {
  out << "\noutcomes:";
  const char *sep = " ";
  for (auto change : all_outcome_changes) {
    out << sep << c.count(change) << " " << to_string(change);
    sep = ", ";
  }
  out << "\n";
  std::vector<text_row> rows;
  for (auto change : all_outcome_changes)
    for (const auto &r : c.outcomes)
      if (r.change == change && change != outcome_change::unchanged)
        rows.push_back({std::string(to_string(r.change)) + (r.known.empty() ? "" : " (known)"),
                        r.cell, r.case_id, outcome_text(r.a), outcome_text(r.b),
                        r.known.empty() ? r.message_b.substr(0, 60) : "known: " + r.known});
  if (rows.empty())
    return;
  out << "\n";
  print_text_table(out, {"change", "cell", "case", "A", "B", "B message"}, rows);
}

/// Observations or binding entries that changed between the runs: reported, not judged, the
/// first 40 in full ("<cell> [<case>] <key>: <A> -> <B>"); "none changed" when compared and equal.
void print_reported(std::ostream &out, const std::vector<reference_change> &changes,
                    const char *what, bool compared) {
  if (changes.empty()) {
    if (compared)
      out << "\n" << what << ": none changed\n";
    return;
  }
  out << "\n" << changes.size() << " " << what << " changed (reported, not judged):\n";
  constexpr std::size_t shown = 40;
  for (std::size_t i = 0; i < changes.size() && i < shown; ++i) {
    const auto &ch = changes[i];
    // A cell paired across package values names A's cell too (run_comparison.hpp).
    out << "  " << terminal_text(ch.cell)
        << (ch.reference == ch.cell ? "" : " (A: " + terminal_text(ch.reference) + ")") << " "
        << (ch.case_id.empty() ? "" : terminal_text(ch.case_id) + " ") << terminal_text(ch.key)
        << ": " << terminal_text(ch.before.dump()) << " -> " << terminal_text(ch.after.dump())
        << (ch.known.empty() ? "" : " (known: " + terminal_text(ch.known) + ")") << "\n";
  }
  if (changes.size() > shown)
    out << "  ... and " << changes.size() - shown << " more in the JSON (--json)\n";
}

void print_divergences(std::ostream &out, const run_comparison &c) {
  if (c.divergences.added.empty() && c.divergences.gone.empty())
    return;
  out << "\n";
  for (const auto &d : c.divergences.added)
    out << "new divergence: " << terminal_text(divergence_identity(d)) << "\n";
  for (const auto &d : c.divergences.gone)
    out << "divergence gone: " << terminal_text(divergence_identity(d)) << "\n";
}

void print_latency_table(std::ostream &out, const run_comparison &c) {
  if (c.latency.empty())
    return;
  std::vector<text_row> rows;
  for (const auto &l : c.latency) {
    const auto &v = l.change.verdict;
    rows.push_back({l.change.probe, l.change.series, fixed(v.median_a, "%.4g"),
                    fixed(v.median_b, "%.4g"), l.unit, fixed(v.ratio.ratio, "%.3f"),
                    "[" + fixed(v.ratio.low, "%.3f") + ", " + fixed(v.ratio.high, "%.3f") + "]",
                    v.p_value < 0.001 ? "<0.001" : fixed(v.p_value, "%.2g"),
                    fixed(100 * l.change.rule.threshold, "%g") + "%", v.verdict});
  }
  out << "\nlatency (B vs A; ratio = median B / median A, 95% bootstrap CI, Mann-Whitney p):\n";
  print_text_table(
      out, {"probe", "series", "A", "B", "unit", "ratio", "CI", "p", "threshold", "verdict"}, rows);
}

} // namespace

void print_compare(std::ostream &out, const run_comparison &c) {
  print_runs(out, c);
  print_outcomes(out, c);
  print_divergences(out, c);
  print_reported(out, c.observations, "observations", true);
  print_reported(out, c.bindings, "binding entries", c.bindings_compared);
  print_latency_table(out, c);
  if (!c.notes.empty())
    out << "\n";
  for (const auto &n : c.notes)
    out << "note: " << terminal_text(n) << "\n";
  for (const auto &why : c.incomplete)
    out << "INCOMPLETE: " << terminal_text(why) << "\n";
  std::string verdict = c.verdict();
  if (verdict != "no regression")
    for (char &ch : verdict)
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  out << "\n"
      << verdict << " (" << c.unexcused_regressions() << " outcome regressions, "
      << c.divergences.added.size() << " new divergences, " << c.slower()
      << " slower latency series)\n";
}

} // namespace cuparity
