// One [[program]] in one cell: its processes, its one case record and its captured bindings.
#include "harness/run/program_watch.hpp"

#include "harness/external/suite_evidence.hpp"
#include "harness/external/suite_process.hpp"
#include "harness/run/captured_cell.hpp"
#include "harness/run/cell_environment.hpp"
#include "harness/run/run_layout.hpp"

#include <filesystem>
#include <sstream>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct program_try {
  outcome result = outcome::error;
  std::string message;
  std::string reason; ///< a skip's: the program's last line
  double time_s = 0;
  std::string process; ///< "p1", "r1", ...
};

/// The last lines of the program's output, on one line: what a person reads first.
std::string output_tail(const suite_process_result &p, std::size_t lines) {
  std::string tail = log_tail(p.log_path, lines);
  for (auto at = tail.find('\n'); at != std::string::npos; at = tail.find('\n', at))
    tail.replace(at, 1, " | ");
  return tail;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

/// Whether the process's map shows some process that bound a driver function.
bool bound_the_driver(const suite_process_result &p) {
  if (!p.map_written)
    return false;
  try {
    return read_suite_evidence({p.map_path}).processes > 0;
  } catch (const std::exception &) {
    return false; // the first process's map is the evidence, and read (and reported) there
  }
}

/// The outcome of one run of the program. A pass needs its exit status and a captured driver: a
/// program that never loaded the driver tested nothing (docs/configuration.md#programs).
program_try judge(const external_suite &x, const suite_process_result &p, bool bound,
                  const std::string &tag) {
  const std::string tail = output_tail(p, 6);
  const std::string log =
      " (log: " + p.log_path + (tail.empty() ? "; no output" : "; it ends: " + tail) + ")";
  program_try t{outcome::fail, "", "", p.wall_ms / 1000, tag};
  if (p.timed_out) {
    t.result = outcome::timeout;
    t.message =
        "timed out: killed at the program's timeout_s, " + seconds_text(x.timeout_s) + " s" + log;
  } else if (p.signal) {
    t.result = outcome::crash;
    t.message = "the program was " + p.how_it_ended() + log;
  } else if (x.skip_exit_code && p.exit_code == *x.skip_exit_code) {
    t.result = outcome::not_supported;
    t.reason = log_tail(p.log_path, 1);
    t.message = "cannot run here: it exited with code " + std::to_string(p.exit_code) +
                ", its skip_exit_code: " + (t.reason.empty() ? "(no output)" : t.reason);
  } else if (p.exit_code != x.exit_code) {
    t.message = "the program " + p.how_it_ended() +
                (x.exit_code ? " (a pass is " + std::to_string(x.exit_code) + ")" : "") + log;
  } else if (!bound) {
    t.result = outcome::error;
    t.message = "nothing captured: the program " + p.how_it_ended() +
                " but no process of it bound a driver function (it never loaded the driver; "
                "a program that tests nothing is no pass)" +
                log;
  } else {
    t.result = outcome::pass;
  }
  return t;
}

/// One case record: the first run's outcome, flaky when a retry ended otherwise.
json case_json(const cell &c, const external_suite &x, const std::vector<program_try> &tries) {
  const program_try &first = tries.front();
  case_record r{.cell = c.id,
                .case_id = x.name,
                .result = first.result,
                .message = first.message,
                .duration_ms = first.time_s * 1000,
                .requirement = first.reason};
  std::string sequence;
  json each = json::array();
  bool changed = false;
  for (const auto &t : tries) {
    changed = changed || t.result != first.result;
    sequence += (sequence.empty() ? "" : ", ") + std::string(to_string(t.result));
    each.push_back({{"outcome", to_string(t.result)},
                    {"message", t.message},
                    {"time_s", t.time_s},
                    {"process", t.process}});
  }
  if (changed) {
    r.result = outcome::flaky;
    r.message = "changed outcome between runs: " + sequence + " (first: " + first.message + ")";
  } else if (tries.size() > 1) {
    r.message += " (the same in " + std::to_string(tries.size()) + " runs)";
  }
  json record = to_json(r);
  record["tries"] = each;
  return record;
}

} // namespace

program_cell::program_cell(const cell_runner &r, const cell &c, const std::string &gpu,
                           bool &cell_recorded)
    : m_r(r), m_cell(c), m_gpu(gpu), m_cell_recorded(cell_recorded),
      m_env(cell_environment(r.m, c, gpu, lock_directory(r.out_root, gpu))) {}

void program_cell::run(const external_suite &x) {
  const std::string dir =
      fs::absolute(m_r.out_root).string() + "/suites/" + file_safe(m_cell.id) + "/" + x.name;
  std::error_code ec;
  fs::remove_all(dir, ec); // a resumed run starts the program afresh: its old files go
  fs::create_directories(dir);
  json processes = json::array();
  auto start = [&](const std::string &tag) {
    const suite_process_spec spec{
        .command = x.command,
        .dir = dir + "/" + tag,
        .suite_dir = dir,
        .env = m_env,
        // A PYTHONPATH the program sets replaces the cell's: the packages folder stays first.
        .extra_env = suite_environment_of(m_r.m, m_cell, x.environment),
        .timeout = std::chrono::milliseconds(static_cast<long long>(x.timeout_s * 1000)),
        .program = true};
    suite_process_result p = run_suite_process(spec, m_r.stop);
    processes.push_back(process_record(p, tag, 1, nullptr, nullptr));
    return p;
  };
  const suite_process_result first = start("p1");
  if (first.stopped)
    return;
  suite_evidence e;
  try {
    if (first.map_written)
      e = read_suite_evidence({first.map_path});
  } catch (const std::exception &ex) {
    append_cell_record(m_r, m_cell, record_type::cell_error,
                       {{"kind", "suite"},
                        {"suite", x.name},
                        {"message", x.name +
                                        ": the program ran, but its captured map cannot be "
                                        "read: " +
                                        ex.what()}});
    return;
  }
  std::vector<program_try> tries{judge(x, first, e.processes > 0, "p1")};
  for (int n = 1; n <= x.retries && !is_success(tries.front().result); ++n) {
    const std::string tag = "r" + std::to_string(n);
    const suite_process_result p = start(tag);
    if (p.stopped)
      return;
    tries.push_back(judge(x, p, bound_the_driver(p), tag));
    if (tries.back().result != tries.front().result)
      break; // flaky, whatever comes next
  }
  m_r.results.append(case_json(m_cell, x, tries));
  if (!m_cell_recorded && e.processes > 0) {
    append_captured_cell_record(m_r, m_cell, m_gpu, e, "program " + x.name);
    m_cell_recorded = true;
  }
  m_ran = true;
  json maps = json::array();
  std::vector<std::string> map_paths;
  if (first.map_written) {
    map_paths.push_back(first.map_path);
    maps.push_back(fs::relative(first.map_path, fs::absolute(m_r.out_root)).string());
  }
  append_cell_record(m_r, m_cell, record_type::suite_end,
                     {{"suite", x.name},
                      {"program", true},
                      {"tests", 1},
                      {"process_count", processes.size()},
                      {"processes", processes},
                      {"maps", maps},
                      {"bindings", bindings_json(e)},
                      {"evidence", evidence_json(e)},
                      {"audit", audit_captured_maps(map_paths, dir, m_env)},
                      {"wall_ms", first.wall_ms}});
}

void program_cell::finish() {
  if (m_ran && !m_cell_recorded) {
    append_captured_cell_record(m_r, m_cell, m_gpu, suite_evidence{}, "no program");
    m_cell_recorded = true;
  }
}

} // namespace cuparity
