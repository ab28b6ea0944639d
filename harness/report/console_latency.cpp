// The latency phase in the console table: per probe and cell, comparisons, noise, baseline.
//
// The functions below share one stream and run in order: a precision one sets is the one the
// next line prints with, as it always was, so the text stays the same.
#include "harness/report/console_writer.hpp"

#include <iomanip>
#include <map>

namespace cuparity {
namespace {

using json = nlohmann::json;
using by_probe_series = std::map<std::string, std::map<std::string, json>>;

/// Rows of `list` by their "probe", then by their `key` ("series" or "cell").
by_probe_series index_by_probe(const json &list, const char *key) {
  by_probe_series out;
  for (const auto &row : list)
    out[row.value("probe", "")][row.value(key, "")] = row;
  return out;
}

/// One cell's median, spreads and facade overhead for one probe.
void print_cell_stats(std::ostream &out, const std::string &cell, const json &st,
                      const json *overhead, const std::string &unit) {
  out << " " << cell << ": " << std::setprecision(4) << st["median"].get<double>() << " " << unit
      << " rcv " << std::setprecision(2) << 100 * st.value("rcv", 0.0) << "% cv "
      << 100 * st["cv"].get<double>() << "%";
  if (overhead)
    out << " (x" << std::setprecision(4) << (*overhead)["ratio"].get<double>() << ", "
        << std::showpos << std::setprecision(3) << (*overhead).value("delta_ns", 0.0)
        << std::noshowpos << " ns)";
  out << ";";
}

void print_probes(std::ostream &out, const matrix &m, const json &lat) {
  auto stat = index_by_probe(lat["stats"], "series");
  auto over = index_by_probe(lat.value("overhead", json::array()), "cell");
  for (const auto &p : lat["probes"]) {
    const std::string name = p["name"], unit = p["unit"];
    out << "  " << std::left << std::setw(26) << name;
    for (const auto &mc : m.cells) {
      if (!stat[name].count(mc.id))
        continue;
      const json *o = over[name].count(mc.id) ? &over[name][mc.id] : nullptr;
      print_cell_stats(out, mc.id, stat[name][mc.id], o, unit);
    }
    out << "\n";
  }
}

void print_comparisons(std::ostream &out, const json &lat) {
  for (const auto &cmp : lat["comparisons"])
    if (cmp["verdict"] != "same")
      out << "  LATENCY " << cmp["probe"].get<std::string>() << ": " << cmp["b"].get<std::string>()
          << " vs " << cmp["a"].get<std::string>() << " is " << cmp["verdict"].get<std::string>()
          << " across processes (ratio " << cmp["ratio"].get<double>() << ", CI "
          << cmp["ci_low"].get<double>() << ".." << cmp["ci_high"].get<double>() << ", p "
          << cmp["p_value"].get<double>() << ", MDE " << 100 * cmp.value("mde", 0.0) << "%)\n";
}

/// In-process pairs: how many read each way, then each that is not "same".
void print_paired(std::ostream &out, const json &lat) {
  const json paired = lat.value("paired", json::array());
  if (paired.empty())
    return;
  std::map<std::string, int> count;
  for (const auto &p : paired)
    ++count[p.value("verdict", "")];
  out << "  paired (nvidia / internal in one process):";
  for (const auto &[verdict, n] : count)
    out << " " << n << " " << verdict;
  out << "\n";
  // The method floor beside the verdicts: no verdict of that probe claims a change inside it.
  for (const auto &f : lat.value("floors", json::array()))
    out << "  method floor " << f.value("probe", "") << ": " << std::setprecision(3)
        << 100 * f.value("floor", 0.0) << "% (" << std::setprecision(3) << f.value("floor_ns", 0.0)
        << " ns) from " << f.value("controls", json::array()).size()
        << " same-address control(s)"
        << (f.value("within_threshold", true) ? "" : ", ABOVE the paired threshold") << "\n";
  for (const auto &p : paired) {
    const std::string verdict = p.value("verdict", "");
    if (verdict == "same")
      continue;
    out << "  PAIRED " << p.value("probe", "") << " in " << p.value("cell", "") << ": ";
    if (verdict == "not_measured") {
      out << "not measured (" << p.value("reason", "") << ")\n";
      continue;
    }
    out << "nvidia is " << verdict << " (x" << std::setprecision(4) << p.value("ratio", 0.0)
        << ", CI " << p.value("ci_low", 0.0) << ".." << p.value("ci_high", 0.0) << ", p "
        << std::setprecision(2) << p.value("p_value", 1.0) << ", MDE " << 100 * p.value("mde", 0.0)
        << "%, " << p.value("pairs", 0) << " pairs";
    if (p.value("same_address", false))
      out << ", same addresses: an A/A control";
    else if (p.contains("floor") && p["floor"].is_number())
      out << ", beyond the method floor " << std::setprecision(3)
          << 100 * p["floor"].get<double>() << "%";
    out << ")\n";
  }
}

/// The widest spread of each probe above the target, then the host's own (reference) one.
void print_noise(std::ostream &out, const json &lat) {
  const auto &noise = lat.value("noise", json::object());
  if (noise.empty())
    return;
  std::map<std::string, double> worst;
  for (const auto &o : noise["over_target"])
    worst[o["probe"]] = std::max(worst[o["probe"]], o["rcv"].get<double>());
  out << "  noise: " << worst.size() << " of " << lat["probes"].size()
      << " probes spread beyond the " << std::setprecision(3)
      << 100 * noise["target_cv"].get<double>() << "% robust-CV target";
  const char *sep = " (largest: ";
  for (const auto &[probe, rcv] : worst) {
    out << sep << probe << " " << std::setprecision(2) << 100 * rcv << "%";
    sep = ", ";
  }
  out << (worst.empty() ? "" : ")");
  if (noise["reference"].is_object())
    out << "; the driver-free " << noise["reference"]["probe"].get<std::string>()
        << " spread up to " << std::setprecision(2)
        << 100 * noise["reference"]["rcv_max"].get<double>() << "% over the same rounds";
  out << "\n";
}

void print_latency_baseline(std::ostream &out, const json &lat) {
  for (const auto &b : lat["baseline"])
    if (b["verdict"] != "same")
      out << "  BASELINE " << b["probe"].get<std::string>() << " " << b["b"].get<std::string>()
          << ": " << b["verdict"].get<std::string>() << " (ratio " << b["ratio"].get<double>()
          << ")\n";
}

} // namespace

void print_latency(std::ostream &out, const matrix &m, const nlohmann::json &latency) {
  out << "latency (" << latency.value("rounds", 0) << " rounds; median per round, robust CV and "
      << "CV over the rounds; facade overhead vs raw pointer, paired in one process):\n";
  print_probes(out, m, latency);
  print_comparisons(out, latency);
  print_paired(out, latency);
  print_noise(out, latency);
  print_latency_baseline(out, latency);
}

} // namespace cuparity
