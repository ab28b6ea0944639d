// The functional phase's breakdown, from the cell, case and cell_exit records.
#include "harness/report/breakdown.hpp"

#include "harness/protocol/records.hpp"
#include "harness/report/terminal_text.hpp"

#include <algorithm>
#include <cstdio>

namespace cuparity {
namespace {

using json = nlohmann::json;

double number(const json &j, const char *key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string suite_of(const std::string &case_id) {
  return case_id.substr(0, case_id.find('.'));
}

void add_cell(phase_breakdown &b, const json &r) {
  b.processes += 1;
  const json startup = r.value("startup_ms", json::object());
  const double init = startup.is_object() ? number(startup, "cuInit") : 0.0;
  const double retain = startup.is_object() ? number(startup, "primary_ctx_retain") : 0.0;
  b.cuinit_ms += init;
  b.primary_ctx_ms += retain;
  b.process_start_ms += std::max(0.0, number(r, "launch_ms") - init - retain);
}

/// How long k cases ran at once, for every k, from time 0 to the last case's end. A cell runs
/// one case at a time: its start is stamped by the runner and its duration by the cell, so a
/// start is clamped to the end of the cell's case before (pipe latency, not concurrency).
void add_timeline(phase_breakdown &b,
                  std::map<std::string, std::vector<std::pair<double, double>>> by_cell) {
  std::vector<std::pair<double, int>> edges;
  for (auto &[cell, spans] : by_cell) {
    std::sort(spans.begin(), spans.end());
    double free_from = 0;
    for (const auto &[start, ms] : spans) {
      const double from = std::max(start, free_from), to = std::max(from, start + ms);
      if (to > from) { // an empty span runs nothing (and its end would sort before its start)
        edges.emplace_back(from, 1);
        edges.emplace_back(to, -1);
      }
      free_from = to;
    }
  }
  if (edges.empty())
    return;
  std::sort(edges.begin(), edges.end()); // at one instant, ends (-1) before starts (+1)
  int running = 0;
  double at = 0;
  b.first_case_ms = edges.front().first;
  for (const auto &[t, step] : edges) {
    if (b.running_ms.size() <= static_cast<std::size_t>(running))
      b.running_ms.resize(running + 1, 0.0);
    b.running_ms[running] += std::max(0.0, t - at);
    at = std::max(at, t);
    running = std::max(0, running + step);
  }
  b.last_case_end_ms = at;
}

} // namespace

phase_breakdown breakdown_of(const std::vector<json> &records, double functional_wall_s) {
  phase_breakdown b;
  b.wall_s = functional_wall_s;
  std::map<std::string, case_cost> cases;
  std::map<std::string, double> cell_wall;
  // cell -> (ms since the phase began, duration) of each case
  std::map<std::string, std::vector<std::pair<double, double>>> spans;
  for (const auto &r : records) {
    if (is_record(r, record_type::cell)) {
      add_cell(b, r);
    } else if (is_record(r, record_type::cell_exit)) {
      b.exit_ms += number(r, "exit_ms");
      cell_wall[r.value("cell", "")] += number(r, "wall_ms");
    } else if (is_record(r, record_type::case_result)) {
      const case_record c = case_record_from_json(r);
      b.cases_ms += c.duration_ms;
      b.lock_wait_ms += c.costs.lock_wait_ms;
      b.helper_start_ms += c.costs.helper_start_ms;
      b.helper_starts += c.costs.helper_start_ms > 0 ? 1 : 0;
      b.helper_ms += c.costs.helper_ms + c.costs.helper_start_ms;
      b.suites_ms[suite_of(c.case_id)] += c.duration_ms;
      case_cost &k = cases[c.case_id];
      k.case_id = c.case_id;
      k.summed_ms += c.duration_ms;
      k.max_ms = std::max(k.max_ms, c.duration_ms);
      k.runs += 1;
      if (c.started_at_ms >= 0)
        spans[c.cell].emplace_back(c.started_at_ms, c.duration_ms);
    }
  }
  add_timeline(b, std::move(spans));
  for (auto &[id, k] : cases)
    b.cases.push_back(k);
  std::stable_sort(b.cases.begin(), b.cases.end(), [](const case_cost &x, const case_cost &y) {
    return x.summed_ms > y.summed_ms;
  });
  for (const auto &[cell, ms] : cell_wall)
    if (ms > b.longest_cell_ms) {
      b.longest_cell = cell;
      b.longest_cell_ms = ms;
    }
  return b;
}

json breakdown_json(const phase_breakdown &b, std::size_t top) {
  json cases = json::array();
  for (std::size_t i = 0; i < b.cases.size() && i < top; ++i)
    cases.push_back({{"case", b.cases[i].case_id},
                     {"summed_ms", b.cases[i].summed_ms},
                     {"max_ms", b.cases[i].max_ms},
                     {"runs", b.cases[i].runs}});
  json out = {{"wall_s", b.wall_s},
              {"processes", b.processes},
              {"summed_ms",
               {{"process_start", b.process_start_ms},
                {"cuInit", b.cuinit_ms},
                {"primary_ctx", b.primary_ctx_ms},
                {"gpu_lock_wait", b.lock_wait_ms},
                {"cases", b.cases_ms},
                {"helper_start", b.helper_start_ms},
                {"helpers", b.helper_ms},
                {"exit", b.exit_ms}}},
              {"helper_starts", b.helper_starts},
              {"suites_ms", b.suites_ms},
              {"cases", cases},
              {"longest_cell", {{"cell", b.longest_cell}, {"wall_ms", b.longest_cell_ms}}}};
  if (b.first_case_ms >= 0)
    out["timeline"] = {{"first_case_ms", b.first_case_ms},
                       {"last_case_end_ms", b.last_case_end_ms},
                       {"running_ms", b.running_ms}};
  return out;
}

namespace {

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
  return buf;
}

} // namespace

std::string breakdown_text(const phase_breakdown &b, std::size_t top) {
  std::string out = "time summed over " + std::to_string(b.processes) +
                    " cell processes: process start " + seconds(b.process_start_ms) + ", cuInit " +
                    seconds(b.cuinit_ms) + ", primary context " + seconds(b.primary_ctx_ms) +
                    ", waiting for the GPU lock " + seconds(b.lock_wait_ms) + ", cases " +
                    seconds(b.cases_ms) + " (helpers " + seconds(b.helper_ms) + ", " +
                    std::to_string(b.helper_starts) + " helper starts " +
                    seconds(b.helper_start_ms) + "), exit " + seconds(b.exit_ms) + "\n";
  std::vector<std::pair<std::string, double>> suites(b.suites_ms.begin(), b.suites_ms.end());
  std::stable_sort(suites.begin(), suites.end(),
                   [](const auto &x, const auto &y) { return x.second > y.second; });
  std::string line;
  for (const auto &[suite, ms] : suites)
    line += (line.empty() ? "" : "; ") + terminal_text(suite) + " " + seconds(ms);
  if (!line.empty())
    out += "  by suite: " + line + "\n";
  line.clear();
  for (std::size_t i = 0; i < b.cases.size() && i < top; ++i)
    line += (line.empty() ? "" : "; ") + terminal_text(b.cases[i].case_id) + " " +
            seconds(b.cases[i].summed_ms) + " (max " + seconds(b.cases[i].max_ms) + ")";
  if (!line.empty())
    out += "  costliest cases: " + line + "\n";
  if (!b.longest_cell.empty())
    out += "  longest cell: " + terminal_text(b.longest_cell) + " " + seconds(b.longest_cell_ms) +
           "\n";
  if (b.first_case_ms >= 0) {
    out += "  timeline: first case at " + seconds(b.first_case_ms) + ", last case ended at " +
           seconds(b.last_case_end_ms) + "; cases running at once:";
    for (std::size_t k = 0; k < b.running_ms.size(); ++k)
      if (b.running_ms[k] > 0)
        out += " " + std::to_string(k) + " for " + seconds(b.running_ms[k]) + ",";
    out.back() = '\n';
  }
  return out;
}

} // namespace cuparity
