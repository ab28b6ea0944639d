// An external suite in one cell: its processes one after another, its tests into case records.
#include "harness/run/suite_watch.hpp"

#include "harness/capture/captured_map.hpp"
#include "harness/external/suite_evidence.hpp"
#include "harness/external/suite_process.hpp"
#include "harness/protocol/case_ids.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/captured_cell.hpp"
#include "harness/run/cell_environment.hpp"
#include "harness/run/program_watch.hpp"
#include "harness/run/run_layout.hpp"
#include "harness/run/suite_tests.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// After this many processes ended inside a test, a pass (the main one, a batch) is not resumed
/// again: a suite whose every test kills its process would otherwise start one process per test.
constexpr int suite_crash_limit = 20;

class suite_cell_run {
public:
  suite_cell_run(const cell_runner &r, const cell &c, const external_suite &x,
                 const std::string &gpu, bool &cell_recorded)
      : m_r(r), m_cell(c), m_x(x), m_gpu(gpu), m_cell_recorded(cell_recorded),
        m_dir(fs::absolute(r.out_root).string() + "/suites/" + file_safe(c.id) + "/" + x.name),
        m_env(cell_environment(r.m, c, gpu, lock_directory(r.out_root, gpu))) {}

  void run();

private:
  [[nodiscard]] bool main_pass();
  [[nodiscard]] bool end_of_main_process(const suite_process_result &p);
  suite_process_result start(const std::string &tag, const std::vector<std::string> &only);
  void take_tests(const suite_process_result &p, const std::string &tag);
  suite_test &add_try(const std::string &nodeid, const std::string &classname,
                      const std::string &name, test_try t);
  [[nodiscard]] std::vector<const suite_test *> main_tests() const;
  [[nodiscard]] long main_failures() const;
  [[nodiscard]] long not_run() const;
  void judge_main_pass();
  void rerun_batches();
  void rerun_alone();
  void rerun(const std::vector<std::size_t> &tests, const std::string &tag);
  void finish(double wall_ms);
  void cell_error(const std::string &message);
  void append(record_type type, json fields) const;

  const cell_runner &m_r;
  const cell &m_cell;
  const external_suite &m_x;
  const std::string m_gpu;
  bool &m_cell_recorded;
  const std::string m_dir;
  const std::map<std::string, std::string> m_env;
  std::vector<suite_test> m_tests;
  std::map<std::string, std::size_t> m_by_nodeid;
  std::vector<std::string> m_main_maps;
  json m_processes = json::array();
  bool m_followed = false;  ///< the plugin reported in some process: node ids can be selected
  bool m_ran_tests = false; ///< some process started a test (else its JUnit holds only errors)
  std::optional<long> m_collected;  ///< what the main pass's first process collected
  std::optional<suite_stop> m_stop; ///< why the plugin ended a main-pass process early
  json m_environment = nullptr;     ///< every test failed alike: no re-run
  json m_budget = nullptr;          ///< max_fails reached: no further process
};

void suite_cell_run::run() {
  const auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::remove_all(m_dir, ec); // a resumed run starts the suite afresh: its old files go
  fs::create_directories(m_dir);
  const bool ran = main_pass();
  if (m_r.stop)
    return;
  if (ran && m_followed) {
    judge_main_pass();
    if (m_environment.is_null() && m_budget.is_null()) {
      rerun_batches();
      rerun_alone();
    }
  }
  for (auto &t : m_tests)
    if (!t.recorded) {
      m_r.results.append(suite_case_record(t, m_cell.id));
      t.recorded = true;
    }
  if (ran && !m_r.stop)
    finish(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

/// Processes until the suite got through its tests, or the plugin stopped one, or the failure
/// budget is spent; false when it could not run (a cell error).
bool suite_cell_run::main_pass() {
  for (int k = 1;; ++k) {
    const std::string tag = "p" + std::to_string(k);
    const suite_process_result p = start(tag, {});
    if (p.stopped)
      return false;
    if (k == 1)
      m_collected = p.progress.collected;
    if (p.map_written)
      m_main_maps.push_back(p.map_path);
    take_tests(p, tag);
    // Tests that passed or were skipped are recorded at once: a run killed later keeps them.
    for (auto &t : m_tests)
      if (!t.recorded && is_success(t.first().result)) {
        m_r.results.append(suite_case_record(t, m_cell.id));
        t.recorded = true;
      }
    if (p.progress.stopped)
      m_stop = p.progress.stopped;
    if (!p.ended_abnormally() || !p.progress.in_flight())
      return end_of_main_process(p);
    const suite_test_progress &t = *p.progress.in_flight();
    add_try(t.nodeid, t.classname, t.name, in_flight_try(p, tag));
    if (m_x.max_fails && main_failures() >= *m_x.max_fails)
      return true; // the budget is spent: no further process
    if (k >= suite_crash_limit) {
      cell_error("the suite's processes ended inside a test " + std::to_string(k) +
                 " times; it is not resumed again (log: " + p.log_path + ")");
      return false;
    }
  }
}

/// "collected 12 tests", "collected 0 tests", "did not say what it collected".
std::string collected_text(const std::optional<long> &n) {
  return n ? "collected " + std::to_string(*n) + " test" + (*n == 1 ? "" : "s")
           : "did not say what it collected (cuparity's pytest plugin reported nothing)";
}

/// The last process of the main pass: the suite ran, or this is its cell error.
bool suite_cell_run::end_of_main_process(const suite_process_result &p) {
  const std::string tail = log_tail(p.log_path, 6);
  const std::string log = " (log: " + p.log_path + "; it ends: " + tail + ")";
  if (p.ended_abnormally()) {
    cell_error("the suite's process " + p.how_it_ended() + " outside any test" + log);
    return false;
  }
  if (!p.junit) {
    cell_error("the suite's process " + p.how_it_ended() + " and " + p.junit_problem + log);
    return false;
  }
  if (m_followed && !m_ran_tests && !m_tests.empty()) {
    // Every module failed to import and no test ran: the suite could not start, one cell error
    // (not one error per module).
    const std::string first = m_tests.front().first().message;
    const std::size_t modules = m_tests.size();
    m_tests.clear();
    cell_error("the suite ran no test: its collection failed in " + std::to_string(modules) +
               " module" + (modules == 1 ? "" : "s") + " (first: " + first + "); it " +
               collected_text(p.progress.collected) + "; its process " + p.how_it_ended() + log);
    return false;
  }
  if (m_tests.empty()) {
    // Zero tests is never a pass (cuda-python's nightly ran none for three weeks unnoticed).
    cell_error("the suite ran no test: it " + collected_text(p.progress.collected) +
               ", its process " + p.how_it_ended() + " and its JUnit file lists none" + log);
    return false;
  }
  return true;
}

suite_process_result suite_cell_run::start(const std::string &tag,
                                           const std::vector<std::string> &only) {
  const bool main = only.empty();
  suite_process_spec spec{
      .command = m_x.command,
      .junit = m_x.junit,
      .dir = m_dir + "/" + tag,
      .suite_dir = m_dir,
      .env = m_env,
      .extra_env = suite_environment_of(m_r.m, m_cell, m_x.environment),
      .only = only,
      .timeout = std::chrono::milliseconds(static_cast<long long>(m_x.timeout_s * 1000)),
      .cwd = m_x.root,
      // The stops are the main pass's: re-runs hold only tests that failed already.
      .same_failures = main ? m_x.environment_after : 0,
      .max_fails = main && m_x.max_fails ? *m_x.max_fails - static_cast<int>(main_failures()) : 0};
  if (main)
    for (const auto &t : m_tests)
      spec.deselect.push_back(t.nodeid);
  suite_process_result p = run_suite_process(spec, m_r.stop);
  m_followed = m_followed || p.progress.collected.has_value();
  m_ran_tests = m_ran_tests || !p.progress.tests.empty();
  const auto *in_flight = p.progress.in_flight();
  m_processes.push_back(
      process_record(p, tag, p.junit ? p.junit->tests.size() : p.progress.tests.size(),
                     in_flight && p.ended_abnormally() ? json(in_flight->nodeid) : json(nullptr),
                     main ? json(nullptr) : json(only)));
  return p;
}

/// A main-pass process's tests: its modules that could not be collected (each once, whichever
/// process reported it), then the tests it ran.
void suite_cell_run::take_tests(const suite_process_result &p, const std::string &tag) {
  for (const auto &e : p.progress.collect_errors)
    if (!m_by_nodeid.count(e.nodeid))
      add_try(e.nodeid, e.classname, e.name, {outcome::error, e.message, 0, tag}).collection_error =
          true;
  for (auto &r : reported_tries(p, tag))
    add_try(r.nodeid, r.classname, r.name, std::move(r.t));
}

suite_test &suite_cell_run::add_try(const std::string &nodeid, const std::string &classname,
                                    const std::string &name, test_try t) {
  auto [it, added] = m_by_nodeid.emplace(nodeid, m_tests.size());
  if (added) {
    const std::string id = m_x.name + "." + (classname.empty() ? "" : classname + ".") + name;
    m_tests.push_back({nodeid, classname, name, id, {}, false});
  }
  suite_test &test = m_tests[it->second];
  test.tries.push_back(std::move(t));
  return test;
}

/// The tests the main pass ran to their end (or died in), its collection errors aside.
std::vector<const suite_test *> suite_cell_run::main_tests() const {
  std::vector<const suite_test *> out;
  for (const auto &t : m_tests)
    if (!t.collection_error)
      out.push_back(&t);
  return out;
}

/// The main pass's failed tests: what max_fails counts (a crash and a timeout are failures too).
long suite_cell_run::main_failures() const {
  long n = 0;
  for (const suite_test *t : main_tests())
    n += is_success(t->first().result) ? 0 : 1;
  return n;
}

/// The tests the first process collected that the main pass never ended.
long suite_cell_run::not_run() const {
  const long ended = static_cast<long>(main_tests().size());
  return m_collected && *m_collected > ended ? *m_collected - ended : 0;
}

/// The main pass's end: a broken environment (every test failed alike) or a spent failure
/// budget ends the suite here, with no re-run.
void suite_cell_run::judge_main_pass() {
  const bool env_stop = m_stop && m_stop->reason == "environment";
  if (env_stop)
    m_environment = {{"message", m_stop->message}, {"count", m_stop->count}};
  else if (const auto same = identical_failures(main_tests()))
    m_environment = {{"message", same->first}, {"count", same->second}};
  if (!m_environment.is_null()) {
    m_environment["stopped"] = env_stop;
    m_environment["not_run"] = not_run();
    return;
  }
  const long failures = main_failures();
  if (m_x.max_fails && failures >= *m_x.max_fails)
    m_budget = {{"max_fails", *m_x.max_fails}, {"failures", failures}, {"not_run", not_run()}};
}

/// deqp-runner's rule: the tests that did not pass run again together, in one fresh process, up
/// to `retries` batches; each batch holds the tests whose outcome has not changed yet (one that
/// changed is flaky, whatever comes next).
void suite_cell_run::rerun_batches() {
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < m_tests.size(); ++i)
    if (!m_tests[i].recorded && !m_tests[i].collection_error)
      pending.push_back(i);
  for (int batch = 1; batch <= m_x.retries && !pending.empty() && !m_r.stop; ++batch) {
    rerun(pending, "b" + std::to_string(batch));
    std::erase_if(pending, [&](std::size_t i) { return !m_tests[i].unchanged(); });
  }
}

/// A few tests that failed alike in every batch run once more, each alone in its own process: one
/// that passes then fails only beside other tests (order-dependent), and is flaky.
void suite_cell_run::rerun_alone() {
  if (m_x.retries == 0)
    return;
  int n = 0;
  for (std::size_t i = 0; i < m_tests.size() && n < m_x.rerun_alone && !m_r.stop; ++i) {
    const suite_test &t = m_tests[i];
    if (!t.recorded && !t.collection_error && t.tries.size() > 1 && t.unchanged())
      rerun({i}, "a" + std::to_string(++n));
  }
}

/// One re-run of `tests` together (tagged `tag`): a process dying inside one of them ends that
/// one's try, and the others resume in a fresh process (`tag`.2, .3, ...), as the main pass does.
void suite_cell_run::rerun(const std::vector<std::size_t> &tests, const std::string &tag) {
  std::set<std::size_t> left(tests.begin(), tests.end());
  auto find = [&](const std::string &nodeid, const std::string &classname,
                  const std::string &name) -> std::optional<std::size_t> {
    for (std::size_t i : left)
      if (m_tests[i].nodeid == nodeid ||
          (m_tests[i].classname == classname && m_tests[i].name == name))
        return i;
    return std::nullopt;
  };
  std::string how = "it was not run";
  for (int k = 1; !left.empty(); ++k) {
    const std::string process = k == 1 ? tag : tag + "." + std::to_string(k);
    std::vector<std::string> only;
    for (std::size_t i : left)
      only.push_back(m_tests[i].nodeid);
    const suite_process_result p = start(process, only);
    if (p.stopped)
      return;
    for (auto &r : reported_tries(p, process))
      if (const auto i = find(r.nodeid, r.classname, r.name)) {
        m_tests[*i].tries.push_back(std::move(r.t));
        left.erase(*i);
      }
    how = "its process " + p.how_it_ended() + " (log: " + p.log_path + ")";
    const suite_test_progress *f = p.progress.in_flight();
    const auto died_in =
        f && p.ended_abnormally() ? find(f->nodeid, f->classname, f->name) : std::nullopt;
    if (!died_in)
      break;
    m_tests[*died_in].tries.push_back(in_flight_try(p, process));
    left.erase(*died_in);
    if (k >= suite_crash_limit)
      break;
  }
  for (std::size_t i : left)
    m_tests[i].tries.push_back(
        {outcome::error, "the re-run did not run this test: " + how, 0, tag});
}

/// The cell's record (once per cell, from its first suite) and the suite's end, both from the
/// captured evidence: the semantic group of an external cell is what its processes bound.
void suite_cell_run::finish(double wall_ms) {
  suite_evidence e;
  try {
    e = read_suite_evidence(m_main_maps);
  } catch (const std::exception &ex) {
    cell_error(std::string("the suite ran, but its captured map cannot be read: ") + ex.what());
    return;
  }
  const json evidence = evidence_json(e);
  if (!m_cell_recorded) {
    append_captured_cell_record(m_r, m_cell, m_gpu, e, "suite " + m_x.name);
    m_cell_recorded = true;
  }
  json maps = json::array();
  for (const auto &m : m_main_maps)
    maps.push_back(fs::relative(m, fs::absolute(m_r.out_root)).string());
  append(record_type::suite_end, {{"suite", m_x.name},
                                  {"tests", m_tests.size()},
                                  {"collected", m_collected ? json(*m_collected) : json(nullptr)},
                                  {"process_count", m_processes.size()},
                                  {"processes", m_processes},
                                  {"environment", m_environment},
                                  {"budget", m_budget},
                                  {"maps", maps},
                                  {"bindings", bindings_json(e)},
                                  {"evidence", evidence},
                                  {"audit", audit_captured_maps(m_main_maps, m_dir, m_env)},
                                  {"wall_ms", wall_ms}});
}

void suite_cell_run::cell_error(const std::string &message) {
  append(record_type::cell_error,
         {{"kind", "suite"}, {"suite", m_x.name}, {"message", m_x.name + ": " + message}});
}

void suite_cell_run::append(record_type type, json fields) const {
  append_cell_record(m_r, m_cell, type, std::move(fields));
}

} // namespace

void run_suite_cell(const cell_runner &r, const work_cell &w, const std::string &gpu) {
  bool cell_recorded = false;
  program_cell programs{r, *w.c, gpu, cell_recorded};
  for (const auto &id : w.cases) {
    const std::string name = suite_of_pair_id(id);
    for (const auto &x : r.m.suites)
      if (x.name == name && !r.stop) {
        if (x.program)
          programs.run(x);
        else
          suite_cell_run(r, *w.c, x, gpu, cell_recorded).run();
      }
    r.progress.case_done(false);
  }
  if (!r.stop)
    programs.finish();
  r.progress.cell_done();
}

} // namespace cuparity
