// Reading a suite's captured maps into the evidence its cell is judged by.
#include "harness/external/suite_evidence.hpp"

#include "harness/capture/captured_map.hpp"

namespace cuparity {
namespace {

bool per_thread_symbol(const std::string &s) {
  return s.ends_with("_ptds") || s.ends_with("_ptsz");
}

/// Per process (pid, image): the functions it bound, and whether any was a per-thread variant.
struct process_bindings {
  std::set<std::string> functions;
  bool per_thread = false;
};

/// The stream-0 mode of the process that bound the most functions. A package's tests may switch
/// the mode inside a child process (Numba's per-thread tests set it in a spawned child; seen on
/// the H200, reports/runs/2026-12-03-h200-9e2b2e1-numba-junit): the suite's main process, which
/// binds the most, is the one that shows what the cell's environment chose.
void choose_stream_mode(const captured_map &m, suite_evidence &e) {
  std::map<std::pair<long, int>, process_bindings> per_process;
  for (const auto &entry : m.entries) {
    if (!entry.symbol)
      continue;
    auto &p = per_process[{entry.process, entry.image}];
    p.functions.insert(entry.function);
    p.per_thread = p.per_thread || per_thread_symbol(*entry.symbol);
  }
  e.processes = per_process.size();
  const process_bindings *best = nullptr;
  for (const auto &[key, p] : per_process)
    if (!best || p.functions.size() > best->functions.size()) {
      best = &p;
      e.pid = key.first;
    }
  if (best) {
    e.functions = best->functions.size();
    e.stream0 = best->per_thread ? "per-thread" : "legacy";
  }
}

} // namespace

suite_evidence read_suite_evidence(const std::vector<std::string> &map_paths) {
  suite_evidence e;
  for (const auto &path : map_paths) {
    const captured_map m = read_captured_map(path);
    for (const auto &entry : m.entries)
      e.bindings[entry.function].insert(entry.symbol.value_or("(none)") + " (" + entry.source +
                                        ")");
    if (e.stream0.empty() && m.status == "ok") {
      e.driver_path = m.driver_path;
      e.driver_version = m.driver_version;
      choose_stream_mode(m, e);
    }
  }
  return e;
}

nlohmann::json evidence_json(const suite_evidence &e) {
  return {{"stream0", e.stream0},
          {"pid", e.pid},
          {"functions", e.functions},
          {"processes", e.processes},
          {"driver_path", e.driver_path},
          {"driver_version",
           e.driver_version ? nlohmann::json(*e.driver_version) : nlohmann::json(nullptr)}};
}

nlohmann::json bindings_json(const suite_evidence &e) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto &[function, symbols] : e.bindings)
    out[function] = std::vector<std::string>(symbols.begin(), symbols.end());
  return out;
}

} // namespace cuparity
