// A captured cell's record and the audit of its maps, for suites and programs alike.
#include "harness/run/captured_cell.hpp"

#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/records.hpp"

#include <fstream>

namespace cuparity {
using nlohmann::json;

void append_cell_record(const cell_runner &r, const cell &c, record_type type, json fields) {
  fields["cell"] = c.id;
  r.results.append(make_record(type, std::move(fields)));
}

void append_captured_cell_record(const cell_runner &r, const cell &c, const std::string &gpu,
                                 const suite_evidence &e, const std::string &what) {
  const json evidence = evidence_json(e);
  append_cell_record(
      r, c, record_type::cell,
      {{"pid", e.pid},
       {"device", gpu},
       {"config",
        {{"binding", "captured"},
         {"stream0", e.stream0.empty() ? "none" : e.stream0},
         {"driver_path", e.driver_path},
         {"include_path", ""},
         {"evidence", what + ": pid " + std::to_string(e.pid) + " bound " +
                          std::to_string(e.functions) + " functions"}}},
       {"driver", {{"path", e.driver_path}, {"version", evidence["driver_version"]}}}});
}

json audit_captured_maps(const std::vector<std::string> &maps, const std::string &dir,
                         const std::map<std::string, std::string> &env) {
  json counts = json::object();
  int failed = 0, audited = 0;
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const std::string out = dir + "/audit-" + std::to_string(i + 1) + ".json";
    process_spec spec{{self_executable(), "audit", "--map", maps[i], "--json", out},
                      env,
                      std::chrono::minutes(5)};
    const process_result ended = run_process(spec);
    std::ifstream in(out);
    const json report = json::parse(in, nullptr, false);
    if (!report.is_object())
      continue;
    ++audited;
    failed += ended.exited && ended.exit_code == 1 ? 1 : 0;
    const json found = report.value("counts", json::object()); // items() needs it alive
    for (const auto &[kind, n] : found.items())
      if (n.is_number_integer())
        counts[kind] = counts.value(kind, 0L) + n.get<long>();
  }
  return {{"maps", maps.size()}, {"audited", audited}, {"failed", failed}, {"counts", counts}};
}

json process_record(const suite_process_result &p, const std::string &tag, std::size_t tests,
                    json in_flight, json only) {
  return {{"process", tag},
          {"pid", p.pid},
          {"exit_code", p.exit_code},
          {"signal", p.signal},
          {"timed_out", p.timed_out},
          {"oom_kills", p.oom_kills},
          {"wall_ms", p.wall_ms},
          {"tests", tests},
          {"in_flight", std::move(in_flight)},
          {"only", std::move(only)},
          {"left", p.left}};
}

} // namespace cuparity
