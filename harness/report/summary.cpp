// summary.json, junit.xml and the console table, all from the same comparison.
#include "harness/report/summary.hpp"

#include "harness/protocol/records.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cuparity {
namespace {

struct cell_view {
  nlohmann::json record;                       // latest "cell" record
  std::map<std::string, nlohmann::json> cases; // case id -> latest "case" record
};

std::map<std::string, cell_view> by_cell(const std::vector<nlohmann::json> &records) {
  std::map<std::string, cell_view> out;
  for (const auto &r : records) {
    if (is_record(r, record_type::cell))
      out[r.value("cell", "")].record = r;
    else if (is_record(r, record_type::case_result))
      out[r.value("cell", "")].cases[r.value("case", "")] = r;
  }
  return out;
}

std::string xml_escape(const std::string &s) {
  std::string out;
  for (unsigned char ch : s) {
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      // XML 1.0 forbids most control characters even when escaped.
      if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
        out += '?';
      else
        out += static_cast<char>(ch);
    }
  }
  return out;
}

/// A testcase of a synthetic suite (equivalence, run) that consists of one failure.
void failing_testcase(std::ostream &out, const std::string &classname, const std::string &name,
                      const std::string &type, const std::string &message,
                      const std::string &detail) {
  out << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"" << xml_escape(name)
      << "\">\n      <failure type=\"" << xml_escape(type) << "\" message=\"" << xml_escape(message)
      << "\">" << xml_escape(detail) << "</failure>\n    </testcase>\n";
}

} // namespace

int verdict_exit_code(const comparison &c, const run_facts &facts) {
  if (c.environment_problem)
    return 3;
  if (!c.problems.empty() || !c.divergences.empty() || facts.latency_failed)
    return 1;
  return 0;
}

nlohmann::json make_summary(const matrix &m, const std::vector<nlohmann::json> &records,
                            const comparison &c, const run_facts &facts) {
  auto cells = by_cell(records);
  nlohmann::json cell_list = nlohmann::json::array();
  for (const auto &mc : m.cells) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto &[k, v] : mc.env)
      env[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    nlohmann::json entry{{"id", mc.id}, {"label", mc.label}, {"env", env}};
    auto it = cells.find(mc.id);
    if (it != cells.end()) {
      entry["config"] = it->second.record.value("config", nlohmann::json::object());
      entry["device"] = it->second.record.value("device", "");
      entry["startup_ms"] = it->second.record.value("startup_ms", nlohmann::json::object());
      entry["group"] = c.cell_group.count(mc.id) ? c.cell_group.at(mc.id) : "";
      std::map<std::string, int> counts;
      for (const auto &[id, rec] : it->second.cases)
        ++counts[rec.value("outcome", "error")];
      entry["counts"] = counts;
    } else {
      entry["config"] = nullptr;
    }
    cell_list.push_back(std::move(entry));
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto &[key, members] : c.groups)
    groups.push_back({{"key", key}, {"cells", members}});
  nlohmann::json divergences = nlohmann::json::array();
  for (const auto &d : c.divergences)
    divergences.push_back(
        {{"group", d.group}, {"case", d.case_id}, {"key", d.key}, {"values", d.values}});
  nlohmann::json problems = nlohmann::json::array();
  for (const auto &p : c.problems)
    problems.push_back(
        {{"kind", p.kind}, {"cell", p.cell}, {"case", p.case_id}, {"message", p.message}});
  nlohmann::json results = nlohmann::json::array();
  for (const auto &[cell_id, view] : cells)
    for (const auto &[case_id, rec] : view.cases)
      results.push_back({{"cell", cell_id},
                         {"case", case_id},
                         {"outcome", rec.value("outcome", "error")},
                         {"message", rec.value("message", "")},
                         {"duration_ms", rec.value("duration_ms", 0.0)},
                         {"observations", rec.value("observations", nlohmann::json::object())}});
  const int code = verdict_exit_code(c, facts);
  return {{"schema", summary_schema},
          {"provenance", facts.provenance},
          {"matrix", {{"name", m.name}, {"path", m.path}, {"description", m.description}}},
          {"started", facts.started},
          {"finished", facts.finished},
          {"shard", facts.shard},
          {"functional_wall_s", facts.functional_wall_s},
          {"counts", c.outcome_counts},
          {"results_count", c.results},
          {"allowed", c.allowed},
          {"cells", cell_list},
          {"groups", groups},
          {"divergences", divergences},
          {"problems", problems},
          {"results", results},
          {"latency", facts.latency},
          {"verdict", code == 0   ? "equivalent"
                      : code == 3 ? "environment"
                                  : "failed"},
          {"exit_code", code}};
}

void write_junit(const std::string &path, const matrix &m,
                 const std::vector<nlohmann::json> &records, const comparison &c) {
  auto cells = by_cell(records);
  std::map<std::pair<std::string, std::string>, std::string> failures;
  for (const auto &p : c.problems)
    if (!p.case_id.empty())
      failures[{p.cell, p.case_id}] +=
          (failures.count({p.cell, p.case_id}) ? "\n" : "") + p.message;
  std::set<std::pair<std::string, std::string>> reported; // (cell, case) shown as a failure
  std::ostringstream x;
  std::size_t total = 0, failed = 0, skipped = 0;
  std::ostringstream suites;
  for (const auto &mc : m.cells) {
    auto it = cells.find(mc.id);
    if (it == cells.end())
      continue;
    std::size_t t = 0, f = 0, s = 0;
    double seconds = 0;
    std::ostringstream cases;
    for (const auto &[case_id, rec] : it->second.cases) {
      ++t;
      const double ms = rec.value("duration_ms", 0.0);
      seconds += ms / 1000;
      const std::string o = rec.value("outcome", "error");
      cases << "    <testcase classname=\"cuparity."
            << xml_escape(case_id.substr(0, case_id.find('.'))) << "\" name=\""
            << xml_escape(case_id) << "\" time=\"" << ms / 1000 << "\">\n";
      auto fit = failures.find({mc.id, case_id});
      if (fit != failures.end()) {
        ++f;
        reported.insert(fit->first);
        cases << "      <failure type=\"" << xml_escape(o) << "\" message=\""
              << xml_escape(fit->second.substr(0, 200)) << "\">" << xml_escape(fit->second)
              << "</failure>\n";
      } else if (o == "not_supported") {
        ++s;
        cases << "      <skipped message=\"" << xml_escape(rec.value("message", "")) << "\"/>\n";
      }
      cases << "    </testcase>\n";
    }
    total += t, failed += f, skipped += s;
    suites << "  <testsuite name=\"" << xml_escape(mc.id) << "\" tests=\"" << t << "\" failures=\""
           << f << "\" errors=\"0\" skipped=\"" << s << "\" time=\"" << seconds
           << "\">\n    <properties>\n";
    for (const auto &[k, v] : mc.env)
      suites << "      <property name=\"env." << xml_escape(k) << "\" value=\""
             << xml_escape(v ? *v : "<unset>") << "\"/>\n";
    const nlohmann::json config = it->second.record.value("config", nlohmann::json::object());
    for (const auto &[k, v] : config.items())
      suites << "      <property name=\"config." << xml_escape(k) << "\" value=\""
             << xml_escape(v.is_string() ? v.get<std::string>() : v.dump()) << "\"/>\n";
    suites << "    </properties>\n" << cases.str() << "  </testsuite>\n";
  }
  if (!c.divergences.empty()) {
    suites << "  <testsuite name=\"equivalence\" tests=\"" << c.divergences.size()
           << "\" failures=\"" << c.divergences.size() << "\" errors=\"0\" skipped=\"0\">\n";
    for (const auto &d : c.divergences) {
      std::string detail;
      for (const auto &[cell, v] : d.values)
        detail += cell + ": " + v.dump() + "\n";
      failing_testcase(suites, "cuparity.equivalence", d.case_id + " " + d.key, "divergence",
                       d.key + " differs in group " + d.group, detail);
    }
    suites << "  </testsuite>\n";
    total += c.divergences.size();
    failed += c.divergences.size();
  }
  // Problems no case testcase carries (a cell that never started, a configuration expectation,
  // a stale expectation or baseline line): without these a CI reading only junit.xml would see
  // a failed run as green.
  std::vector<const problem *> unattached;
  for (const auto &p : c.problems)
    if (p.case_id.empty() || !reported.count({p.cell, p.case_id}))
      unattached.push_back(&p);
  if (!unattached.empty()) {
    suites << "  <testsuite name=\"run\" tests=\"" << unattached.size() << "\" failures=\""
           << unattached.size() << "\" errors=\"0\" skipped=\"0\">\n";
    for (const problem *p : unattached) {
      std::string name = p->kind;
      if (!p->cell.empty())
        name += " [" + p->cell + "]";
      if (!p->case_id.empty())
        name += " " + p->case_id;
      failing_testcase(suites, "cuparity.run", name, p->kind, p->message.substr(0, 200),
                       p->message);
    }
    suites << "  </testsuite>\n";
    total += unattached.size();
    failed += unattached.size();
  }
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cuparity "
    << xml_escape(m.name) << "\" tests=\"" << total << "\" failures=\"" << failed
    << "\" errors=\"0\" skipped=\"" << skipped << "\">\n"
    << suites.str() << "</testsuites>\n";
  std::ofstream out(path);
  if (!out)
    throw std::runtime_error("cannot write " + path);
  out << x.str();
}

void print_console(std::ostream &out, const matrix &m, const std::vector<nlohmann::json> &records,
                   const comparison &c, const run_facts &facts) {
  auto cells = by_cell(records);
  const bool simulated = facts.provenance.value("simulated", false);
  if (simulated)
    out << "*** SIMULATED DRIVER: these results describe cuparity's CPU stand-in, not a GPU ***\n";
  std::size_t width = 4;
  for (const auto &mc : m.cells)
    width = std::max(width, mc.id.size());
  out << std::left << std::setw(static_cast<int>(width)) << "cell"
      << "  binding   stream0     "
      << "pass  fail  n/s  other  group\n";
  for (const auto &mc : m.cells) {
    auto it = cells.find(mc.id);
    out << std::left << std::setw(static_cast<int>(width)) << mc.id << "  ";
    if (it == cells.end()) {
      out << "(not run)\n";
      continue;
    }
    const auto cfg = it->second.record.value("config", nlohmann::json::object());
    std::map<std::string, int> n;
    for (const auto &[id, rec] : it->second.cases)
      ++n[rec.value("outcome", "error")];
    const int other =
        static_cast<int>(it->second.cases.size()) - n["pass"] - n["fail"] - n["not_supported"];
    std::string binding = cfg.value("binding", "?") + (cfg.value("fallback", false) ? "*" : "");
    out << std::setw(10) << binding << std::setw(12) << cfg.value("stream0", "?") << std::right
        << std::setw(4) << n["pass"] << std::setw(6) << n["fail"] << std::setw(5)
        << n["not_supported"] << std::setw(7) << other << "  " << std::left;
    std::string group = c.cell_group.count(mc.id) ? c.cell_group.at(mc.id) : "";
    std::size_t gi = 0;
    for (const auto &[key, members] : c.groups) {
      if (key == group)
        break;
      ++gi;
    }
    out << "G" << gi << "\n";
  }
  std::size_t gi = 0;
  for (const auto &[key, members] : c.groups)
    out << "  G" << gi++ << ": " << key << " (" << members.size() << " cells)\n";
  out << "  (* = fallback from nvidia)\n";
  for (const auto &p : c.problems)
    out << "PROBLEM " << p.kind << (p.cell.empty() ? "" : " [" + p.cell + "]")
        << (p.case_id.empty() ? "" : " " + p.case_id) << ": " << p.message << "\n";
  for (const auto &d : c.divergences) {
    out << "DIVERGENCE " << d.case_id << " " << d.key << " in " << d.group << ":\n";
    for (const auto &[cell, v] : d.values)
      out << "    " << cell << ": " << v.dump() << "\n";
  }
  if (facts.latency.is_object()) {
    const auto &lat = facts.latency;
    out << "latency (" << lat.value("rounds", 0) << " rounds; median per round, robust CV and "
        << "CV over the rounds; facade overhead vs direct pointer):\n";
    std::map<std::string, std::map<std::string, nlohmann::json>> stat;
    for (const auto &st : lat["stats"])
      stat[st["probe"]][st["series"]] = st;
    std::map<std::string, std::map<std::string, nlohmann::json>> over;
    for (const auto &o : lat["overhead"])
      over[o["probe"]][o["series"]] = o;
    for (const auto &p : lat["probes"]) {
      const std::string name = p["name"], unit = p["unit"];
      out << "  " << std::left << std::setw(26) << name;
      for (const auto &mc : m.cells) {
        if (!stat[name].count(mc.id))
          continue;
        const auto &st = stat[name][mc.id];
        out << " " << mc.id << ": " << std::setprecision(4) << st["median"].get<double>() << " "
            << unit << " rcv " << std::setprecision(2) << 100 * st.value("rcv", 0.0) << "% cv "
            << 100 * st["cv"].get<double>() << "%";
        if (over[name].count(mc.id)) {
          const auto &o = over[name][mc.id];
          out << " (x" << std::setprecision(4) << o["ratio"].get<double>() << ", " << std::showpos
              << std::setprecision(3) << o["delta"].get<double>() << std::noshowpos << " " << unit
              << ")";
        }
        out << ";";
      }
      out << "\n";
    }
    for (const auto &cmp : lat["comparisons"])
      if (cmp["verdict"] != "same")
        out << "  LATENCY " << cmp["probe"].get<std::string>() << ": "
            << cmp["b"].get<std::string>() << " vs " << cmp["a"].get<std::string>() << " is "
            << cmp["verdict"].get<std::string>() << " (ratio " << cmp["ratio"].get<double>()
            << ", 95% CI " << cmp["ci_low"].get<double>() << ".." << cmp["ci_high"].get<double>()
            << ", p " << cmp["p_value"].get<double>() << ")\n";
    if (const auto &noise = lat.value("noise", nlohmann::json::object()); !noise.empty()) {
      // The widest spread of each probe above the target, then the host's own (reference) one.
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
    for (const auto &b : lat["baseline"])
      if (b["verdict"] != "same")
        out << "  BASELINE " << b["probe"].get<std::string>() << " " << b["b"].get<std::string>()
            << ": " << b["verdict"].get<std::string>() << " (ratio " << b["ratio"].get<double>()
            << ")\n";
    out << std::fixed;
  }
  const int code = verdict_exit_code(c, facts);
  out << "cuparity: " << m.name << ": " << c.results << " results in " << m.cells.size()
      << " cells, " << c.groups.size() << " semantic groups; " << c.problems.size() << " problems, "
      << c.divergences.size() << " divergences, " << c.allowed
      << " allowed non-passes; functional phase " << std::fixed << std::setprecision(1)
      << facts.functional_wall_s << " s: "
      << (code == 0   ? "EQUIVALENT"
          : code == 3 ? "ENVIRONMENT PROBLEM"
                      : "FAILED")
      << "\n";
}

} // namespace cuparity
