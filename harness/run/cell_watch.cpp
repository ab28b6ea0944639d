// The cell watch: starts a cell's processes, reads their events, keeps the watchdog.
#include "harness/run/cell_watch.hpp"

#include "harness/framework/case_registry.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/cell_environment.hpp"
#include "harness/run/run_layout.hpp"
#include "harness/run/suite_watch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cuparity {
namespace {

using steady = std::chrono::steady_clock;

/// A cell process gets this long to report its start (driver loading, context creation).
constexpr auto startup_timeout = std::chrono::minutes(5);
/// And this long from the end of one case to the start of the next: 120 s, or the whole seconds
/// of CUPARITY_BETWEEN_CASES_TIMEOUT_S (1 to 3600), which tests set to see a wait in seconds.
std::chrono::seconds between_cases_timeout() {
  static const std::chrono::seconds value = [] {
    const char *v = std::getenv("CUPARITY_BETWEEN_CASES_TIMEOUT_S");
    char *end = nullptr;
    const long n = v ? std::strtol(v, &end, 10) : 0;
    return v && *v && end && *end == '\0' && n >= 1 && n <= 3600 ? std::chrono::seconds(n)
                                                                 : std::chrono::seconds(120);
  }();
  return value;
}
/// Waiting for the GPU lock, a cell waits for other cells' starts and cases, each bounded by its
/// own deadline (startup_timeout, the case's timeout), after which its process is killed and the
/// lock released. So the waiter's bound is only a backstop, far above any of theirs: a healthy
/// cell's exclusive cases must never time out for the sake of a cell stuck at its start (seen
/// with cuInit delayed 150 s: the healthy cell was killed after 120 s of waiting;
/// tests/behaviour/lock_fairness.py).
constexpr auto lock_wait_timeout = std::chrono::minutes(60);

double ms_since(steady::time_point t) {
  return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

/// What one cell process did, as its events told.
struct attempt {
  std::string current; ///< the case running; empty between cases
  steady::time_point spawned = steady::now();
  steady::time_point last_event = spawned;
  steady::time_point case_started = spawned;
  steady::time_point deadline = case_started + startup_timeout;
  bool started = false;        ///< it reported its start
  bool cell_failed = false;    ///< the cell cannot run: a cell error, or no start in time
  bool progressed = false;     ///< some case got its record in this process
  bool watchdog_fired = false; ///< a case was killed at its deadline
};

/// One cell: its processes one after another, until every case has its record.
class cell_watch {
public:
  cell_watch(const cell_runner &r, const work_cell &w, const std::string &gpu)
      : m_r(r), m_cell(*w.c), m_gpu(gpu), m_log(cell_log_path(r.log_dir, w.c->id)),
        m_remaining(w.cases) {}

  void run();

private:
  [[nodiscard]] process_spec cell_spec() const;
  void watch(child_process &child, attempt &a);
  void on_deadline(child_process &child, attempt &a);
  void on_event(const nlohmann::json &ev, const child_process &child, attempt &a);
  void on_cell_start(const nlohmann::json &ev, attempt &a);
  [[nodiscard]] bool another_process(const process_result &r, const attempt &a, int pid);
  void record_case(case_record r, int pid);
  void recorded(const std::string &case_id, attempt &a);
  void append(record_type t, nlohmann::json fields) const;
  /// `t` on the phase's timeline: ms since the functional phase began.
  [[nodiscard]] double at_ms(steady::time_point t) const {
    return std::chrono::duration<double, std::milli>(t - m_r.phase_start).count();
  }

  const cell_runner &m_r;
  const cell &m_cell;
  const std::string m_gpu;
  const std::string m_log;
  std::vector<std::string> m_remaining; ///< the cases without a record yet
};

void cell_watch::run() {
  while (!m_remaining.empty() && !m_r.stop) {
    // The runner's worker thread runs this, and a cell's PR_SET_PDEATHSIG fires when the thread
    // that started it ends (prctl(2); harness/platform/parent_death.cpp). That never cuts a cell
    // short: `child` is reaped (waited for, killed first if need be) before this iteration ends,
    // and the worker takes its next cell or returns only after that.
    child_process child(cell_spec(), m_log);
    attempt a;
    watch(child, a);
    if (m_r.stop)
      return;
    const process_result ended = child.wait();
    // How long the process lived, and how long it took to exit after its last event (tearing
    // down its contexts): the phase's breakdown.
    append(record_type::cell_exit, {{"pid", child.pid()},
                                    {"wall_ms", ms_since(a.spawned)},
                                    {"exit_ms", ms_since(a.last_event)},
                                    {"ended_at_ms", ms_since(m_r.phase_start)}});
    if (!another_process(ended, a, child.pid()))
      break;
  }
  m_r.progress.cell_done();
}

process_spec cell_watch::cell_spec() const {
  process_spec spec;
  spec.argv = {self_executable(), "cell", "--events-fd", "3"};
  for (const auto &c : m_remaining) {
    spec.argv.push_back("--case");
    spec.argv.push_back(c);
  }
  spec.env = cell_environment(m_r.m, m_cell, m_gpu, lock_directory(m_r.out_root, m_gpu));
  return spec;
}

/// Reads events until the process closes its end, the watchdog fires or the run is stopped.
void cell_watch::watch(child_process &child, attempt &a) {
  std::string line;
  for (;;) {
    if (m_r.stop) {
      child.kill_group();
      return;
    }
    const auto status = child.read_line(line, std::chrono::milliseconds(200));
    if (status == child_process::read_status::timeout) {
      if (steady::now() < a.deadline)
        continue;
      on_deadline(child, a);
      return;
    }
    if (status == child_process::read_status::eof)
      return;
    nlohmann::json ev;
    try {
      ev = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception &) {
      continue; // not an event (cannot happen on fd 3 unless a driver writes there)
    }
    a.last_event = steady::now();
    on_event(ev, child, a);
  }
}

void cell_watch::on_deadline(child_process &child, attempt &a) {
  child.kill_group();
  (void)child.wait();
  if (!a.current.empty()) {
    const double ms = ms_since(a.case_started);
    record_case({.case_id = a.current,
                 .result = outcome::timeout,
                 .message = "killed by the watchdog after " +
                            std::to_string(m_r.timeout_of(a.current).count() / 1000.0) + " s",
                 .duration_ms = ms},
                child.pid());
    recorded(a.current, a); // the kill that follows is not a crash of this case
    a.watchdog_fired = true;
  } else if (!a.started) {
    append(record_type::cell_error,
           {{"kind", "startup"}, {"message", "the cell process did not start within 5 minutes"}});
    a.cell_failed = true;
  }
}

void cell_watch::on_event(const nlohmann::json &ev, const child_process &child, attempt &a) {
  const auto kind = event_of(ev);
  if (kind == event_kind::cell_start) {
    on_cell_start(ev, a);
  } else if (kind == event_kind::cell_error) {
    append(record_type::cell_error,
           {{"kind", ev.value("kind", "")}, {"message", ev.value("message", "")}});
    a.cell_failed = true;
  } else if (kind == event_kind::lock_wait) {
    a.deadline = steady::now() + lock_wait_timeout;
  } else if (kind == event_kind::case_start) {
    a.current = ev.value("case", "");
    a.case_started = steady::now();
    a.deadline = a.case_started + m_r.timeout_of(a.current);
  } else if (kind == event_kind::case_end) {
    const std::string c = ev.value("case", "");
    // An outcome name this runner does not know is no valid result: it counts as an error.
    record_case({.case_id = c,
                 .result = parse_outcome(ev.value("outcome", "error")).value_or(outcome::error),
                 .message = ev.value("message", ""),
                 .observations = ev.value("observations", nlohmann::json::object()),
                 .duration_ms = ev.value("duration_ms", 0.0),
                 .costs = {.lock_wait_ms = ev.value("lock_wait_ms", 0.0),
                           .helper_start_ms = ev.value("helper_start_ms", 0.0),
                           .helper_ms = ev.value("helper_ms", 0.0)},
                 .requirement = ev.value("requirement", ""),
                 .started_at_ms = at_ms(a.case_started)},
                child.pid());
    recorded(c, a);
    a.deadline = steady::now() + between_cases_timeout();
  } else if (kind == event_kind::cell_end) {
    append(record_type::binding_map, {{"map", ev.value("binding_map", nlohmann::json::array())}});
  }
}

void cell_watch::on_cell_start(const nlohmann::json &ev, attempt &a) {
  a.started = true;
  append(record_type::cell, {{"pid", ev.value("pid", 0)},
                             {"device", m_gpu},
                             {"config", ev.value("config", nlohmann::json::object())},
                             {"driver", ev.value("driver", nlohmann::json::object())},
                             {"startup_ms", ev.value("startup_ms", nlohmann::json::object())},
                             {"launch_ms", ms_since(a.spawned)},
                             {"spawned_at_ms", at_ms(a.spawned)}});
  a.deadline = steady::now() + between_cases_timeout();
}

/// After a process ended: records what it left unfinished; true when the rest of the cell
/// (if any) runs in a new process.
bool cell_watch::another_process(const process_result &r, const attempt &a, int pid) {
  if (!a.current.empty()) {
    // The process died inside a case: that case crashed; the rest continue in a new one.
    const std::string how =
        r.signal ? "killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")"
                 : "exited with code " + std::to_string(r.exit_code);
    record_case({.case_id = a.current,
                 .result = outcome::crash,
                 .message = "the cell process " + how + " during this case (log: " + m_log + ")",
                 .duration_ms = ms_since(a.case_started)},
                pid);
    std::erase(m_remaining, a.current);
    return true;
  }
  if (a.cell_failed)
    return false;
  if (a.watchdog_fired)
    return true;
  if (r.exited && r.exit_code == exit_code::cell_poisoned && a.progressed)
    return true; // a sticky error: the rest runs in a fresh process
  // Ended without running them and without a crash inside a case: record, don't loop.
  for (const auto &c : m_remaining)
    record_case({.case_id = c,
                 .result = outcome::error,
                 .message = "the cell process ended (exit " + std::to_string(r.exit_code) +
                            ", signal " + std::to_string(r.signal) +
                            ") before running this case (log: " + m_log + ")"},
                pid);
  m_remaining.clear();
  return true;
}

/// Appends the case's record, with the pid of the process that ran it (for reading its log).
void cell_watch::record_case(case_record r, int pid) {
  r.cell = m_cell.id;
  nlohmann::json record = to_json(r);
  record["pid"] = pid;
  m_r.results.append(record);
  m_r.progress.case_done(!is_success(r.result));
}

void cell_watch::recorded(const std::string &case_id, attempt &a) {
  std::erase(m_remaining, case_id);
  a.current.clear();
  a.progressed = true;
}

void cell_watch::append(record_type t, nlohmann::json fields) const {
  fields["cell"] = m_cell.id;
  m_r.results.append(make_record(t, std::move(fields)));
}

} // namespace

std::chrono::milliseconds cell_runner::timeout_of(const std::string &case_id) const {
  if (m.case_timeout)
    return *m.case_timeout;
  if (const case_def *d = case_registry::instance().find(case_id))
    return d->timeout;
  return std::chrono::seconds(120);
}

void cell_runner::run(const work_cell &w, const std::string &gpu) const {
  if (!m.suites.empty())
    return run_suite_cell(*this, w, gpu);
  cell_watch(*this, w, gpu).run();
}

} // namespace cuparity
