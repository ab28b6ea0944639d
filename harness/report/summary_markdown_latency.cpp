// Latency rows are listed by the verdict the latency phase wrote; none is judged again here.
#include "harness/report/summary_markdown_latency.hpp"

#include "harness/report/markdown_text.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace cuparity {
namespace {

using json = nlohmann::json;
namespace ln = lenient;

/// Where a row goes in its table: what a reader must see first, first.
int rank(const json &row) {
  if (ln::flag(row, "regression"))
    return 0;
  static const std::map<std::string, int> order = {
      {"slower", 0}, {"faster", 1}, {"ambiguous", 2}, {"same", 3}, {"not_measured", 5}};
  const auto it = order.find(ln::text(row, "verdict"));
  return it == order.end() ? 4 : it->second;
}

std::vector<std::size_t> by_rank(const json &rows) {
  std::vector<std::size_t> out(rows.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = i;
  std::stable_sort(out.begin(), out.end(),
                   [&](std::size_t a, std::size_t b) { return rank(rows[a]) < rank(rows[b]); });
  return out;
}

/// "2 slower, 5 same": each verdict's count, in rank order.
std::string verdict_counts(const json &rows) {
  std::map<std::pair<int, std::string>, std::size_t> n;
  for (const auto &r : rows)
    ++n[{rank(r), ln::flag(r, "regression") ? "regression" : ln::text(r, "verdict")}];
  std::string out;
  for (const auto &[key, count] : n)
    out +=
        (out.empty() ? "" : ", ") + std::to_string(count) + " " + markdown_inline(key.second, 40);
  return out;
}

std::string interval(const json &row) {
  if (!ln::number(row, "ci_low") || !ln::number(row, "ci_high"))
    return "–";
  return ln::figure(row, "ci_low") + "–" + ln::figure(row, "ci_high");
}

std::string paired_row(const json &r) {
  std::string verdict = ln::text(r, "verdict");
  if (verdict == "not_measured")
    verdict = "not measured: " + ln::text(r, "reason");
  if (ln::flag(r, "control"))
    verdict += " (same-address control)";
  return "| " + markdown_inline(ln::text(r, "probe")) + " | " +
         markdown_inline(ln::text(r, "cell")) + " | " +
         markdown_inline(verdict, markdown_message_chars) + " | " + ln::figure(r, "ratio") + " | " +
         interval(r) + " | " + ln::figure(r, "p_value", "%.2g") + " |";
}

std::string across_row(const json &r) {
  return "| " + markdown_inline(ln::text(r, "probe")) + " | " + markdown_inline(ln::text(r, "a")) +
         " | " + markdown_inline(ln::text(r, "b")) + " | " +
         markdown_inline(ln::text(r, "verdict"), 40) + " | " + ln::figure(r, "ratio") + " | " +
         interval(r) + " | " + ln::figure(r, "p_value", "%.2g") + " |";
}

std::string baseline_row(const json &r) {
  return "| " + markdown_inline(ln::text(r, "probe")) + " | " + markdown_inline(ln::text(r, "b")) +
         " | " + markdown_inline(ln::text(r, "verdict"), 40) + " | " + ln::figure(r, "ratio") +
         " | " + interval(r) + " | " + (ln::flag(r, "regression") ? "yes" : "no") + " |";
}

void verdict_table(markdown_page &page, const json &rows, std::string_view heading,
                   std::string_view header, std::string (*row)(const json &),
                   std::string_view what) {
  const auto order = by_rank(rows);
  page.table(
      heading, header, order.size(), [&](std::size_t i) { return row(rows[order[i]]); }, what);
}

} // namespace

void latency_markdown(markdown_page &page, const nlohmann::json &latency) {
  if (!latency.is_object())
    return;
  const json &paired = ln::array(latency, "paired");
  const json &across = ln::array(latency, "comparisons");
  const json &baseline = ln::array(latency, "baseline");
  std::string counts;
  for (const auto &[name, rows] : {std::pair<const char *, const json *>{"paired", &paired},
                                   {"across processes", &across},
                                   {"against the baseline", &baseline}})
    if (!rows->empty())
      counts += (counts.empty() ? "" : "; ") + std::string(name) + " " + verdict_counts(*rows);
  (void)page.add("\n### Latency\n\n" + ln::figure(latency, "rounds", "%.0f") + " rounds" +
                 (counts.empty() ? ": no verdict." : ": " + counts + "."));
  verdict_table(page, paired, "#### Paired: nvidia against internal, in one process",
                "| probe | cell | verdict | ratio | 99% CI | p |", paired_row, "paired verdicts");
  verdict_table(page, across, "#### Across processes: cell b against cell a",
                "| probe | a | b | verdict of b | ratio b/a | 99% CI | p |", across_row,
                "verdicts across processes");
  verdict_table(page, baseline, "#### Against the baseline",
                "| probe | series | verdict | ratio | 99% CI | regression |", baseline_row,
                "baseline verdicts");
  const json &noise = ln::object(latency, "noise");
  if (const json &over = ln::array(noise, "over_target"); !over.empty())
    (void)page.add("\nNoise: " + std::to_string(over.size()) +
                   " series spread beyond the robust-CV target of " +
                   ln::figure(noise, "target_cv") + " (summary.json's `latency.noise`).");
}

} // namespace cuparity
