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

#include <filesystem>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// After this many processes ended inside a test, the suite stops resuming: a suite whose every
/// test kills its process would otherwise start one process per test.
constexpr int suite_crash_limit = 20;

struct test_try {
  outcome result = outcome::error;
  std::string message;
  double time_s = 0;
  std::string process; ///< the tag of the process that ran it ("p1", "r3")
};

struct suite_test {
  std::string nodeid, classname, name, case_id;
  std::vector<test_try> tries;
  bool recorded = false;
};

outcome outcome_of_junit(junit_outcome o) {
  switch (o) {
  case junit_outcome::passed:
    return outcome::pass;
  case junit_outcome::failed:
    return outcome::fail;
  case junit_outcome::skipped:
    return outcome::not_supported;
  case junit_outcome::errored:
    break;
  }
  return outcome::error;
}

outcome outcome_of_progress(const suite_test_progress &t) {
  return t.outcome == "passed"    ? outcome::pass
         : t.outcome == "skipped" ? outcome::not_supported
         : t.errored()            ? outcome::error
         : t.outcome == "failed"  ? outcome::fail
                                  : outcome::error;
}

/// The first line of a failure's message attribute, else of its text: pytest puts the whole
/// assertion rewrite in the attribute, and the traceback is in the suite's log. A test id the
/// file holds more than once is one result, the gravest (junit_test::duplicates): never flaky,
/// and its message says so.
std::string junit_message(const junit_test &t, const std::string &junit_path) {
  const std::string &text = t.message.empty() ? t.detail : t.message;
  const std::string first = text.substr(0, text.find('\n'));
  if (t.duplicates.empty())
    return first;
  std::string each;
  for (const auto &[line, o] : t.duplicates)
    each +=
        (each.empty() ? "" : ", ") + std::string(to_string(o)) + " at line " + std::to_string(line);
  return "duplicate test id in " + fs::path(junit_path).filename().string() + ": " +
         std::to_string(t.duplicates.size()) + " <testcase> elements (" + each +
         "), the gravest stands" + (first.empty() ? "" : ": " + first);
}

/// A try from a JUnit test. An error's message is the plugin's where it said one: JUnit's is the
/// first line of a report, and a report without a crash line (a fixture pytest cannot find) starts
/// with the test's file and line ("failed on setup with "file t.py, line 13"), which names
/// neither the cause nor is the same for two tests that hit the same one.
test_try junit_try(const junit_test &t, const suite_test_progress *seen, const std::string &path,
                   const std::string &tag) {
  std::string message = junit_message(t, path);
  if (t.outcome == junit_outcome::errored && t.duplicates.empty() && seen && seen->ended &&
      seen->errored() && !seen->message.empty())
    message = seen->junit_style_message();
  return {outcome_of_junit(t.outcome), message, t.time_s, tag};
}

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
  suite_process_result start(const std::string &tag, const std::optional<std::string> &only);
  void take_tests(const suite_process_result &p, const std::string &tag);
  suite_test &add_try(const std::string &nodeid, const std::string &classname,
                      const std::string &name, test_try t);
  void rerun(suite_test &t);
  [[nodiscard]] test_try rerun_try(const suite_process_result &p, const suite_test &t,
                                   const std::string &tag) const;
  void record_test(suite_test &t);
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
  int m_reruns = 0;
};

void suite_cell_run::run() {
  const auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::remove_all(m_dir, ec); // a resumed run starts the suite afresh: its old files go
  fs::create_directories(m_dir);
  const bool ran = main_pass();
  if (m_r.stop)
    return;
  for (auto &t : m_tests)
    if (!t.recorded && ran && m_followed && !is_success(t.tries.front().result))
      rerun(t);
  for (auto &t : m_tests)
    if (!t.recorded)
      record_test(t);
  if (ran && !m_r.stop)
    finish(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

/// Processes until the suite got through its tests; false when it could not (a cell error).
bool suite_cell_run::main_pass() {
  for (int k = 1;; ++k) {
    const suite_process_result p = start("p" + std::to_string(k), std::nullopt);
    if (p.stopped)
      return false;
    if (p.map_written)
      m_main_maps.push_back(p.map_path);
    take_tests(p, "p" + std::to_string(k));
    // Tests that passed or were skipped are recorded at once: a run killed later keeps them.
    for (auto &t : m_tests)
      if (!t.recorded && is_success(t.tries.front().result))
        record_test(t);
    if (!p.ended_abnormally() || !p.progress.in_flight())
      return end_of_main_process(p);
    const suite_test_progress &t = *p.progress.in_flight();
    add_try(
        t.nodeid, t.classname, t.name,
        {p.timed_out ? outcome::timeout : outcome::crash,
         "the suite's process " + p.how_it_ended() + " during this test (log: " + p.log_path + ")",
         p.in_flight_s(), "p" + std::to_string(k)});
    if (k >= suite_crash_limit) {
      cell_error("the suite's processes ended inside a test " + std::to_string(k) +
                 " times; it is not resumed again (log: " + p.log_path + ")");
      return false;
    }
  }
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
    // pytest's collection errors are <error> testcases of the modules that failed to import,
    // and no test ran: the suite could not start, one cell error (not one error per module).
    const std::string first = m_tests.front().tries.front().message;
    m_tests.clear();
    cell_error("the suite ran no test: its collection failed (" + first + "); its process " +
               p.how_it_ended() + log);
    return false;
  }
  if (m_tests.empty()) {
    cell_error("the suite ran no test: its process " + p.how_it_ended() + " and its JUnit file " +
               "lists none (an import error stops a pytest suite at collection)" + log);
    return false;
  }
  return true;
}

suite_process_result suite_cell_run::start(const std::string &tag,
                                           const std::optional<std::string> &only) {
  suite_process_spec spec{m_x.command,
                          m_x.junit,
                          m_dir + "/" + tag,
                          m_dir,
                          m_env,
                          suite_environment_of(m_r.m, m_cell, m_x.environment),
                          {},
                          only,
                          std::chrono::milliseconds(static_cast<long long>(m_x.timeout_s * 1000)),
                          m_x.root};
  if (!only)
    for (const auto &t : m_tests)
      spec.deselect.push_back(t.nodeid);
  suite_process_result p = run_suite_process(spec, m_r.stop);
  m_followed = m_followed || p.progress.collected.has_value();
  m_ran_tests = m_ran_tests || !p.progress.tests.empty();
  const auto *in_flight = p.progress.in_flight();
  m_processes.push_back(
      process_record(p, tag, p.junit ? p.junit->tests.size() : p.progress.tests.size(),
                     in_flight && p.ended_abnormally() ? json(in_flight->nodeid) : json(nullptr),
                     only ? json(*only) : json(nullptr)));
  return p;
}

/// The JUnit file's tests, or, from a process killed before it could write one, the tests its
/// progress shows ended.
void suite_cell_run::take_tests(const suite_process_result &p, const std::string &tag) {
  if (p.junit) {
    for (const auto &t : p.junit->tests) {
      const suite_test_progress *seen = p.progress.find_junit(t.classname, t.name);
      add_try(seen ? seen->nodeid : t.classname + "::" + t.name, t.classname, t.name,
              junit_try(t, seen, p.junit_path, tag));
    }
    return;
  }
  for (const auto &t : p.progress.tests)
    if (t.ended)
      add_try(t.nodeid, t.classname, t.name,
              {outcome_of_progress(t), t.junit_style_message(), t.duration_s, tag});
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

/// deqp-runner's rule: a test that did not pass runs again alone, in a fresh process, up to the
/// suite's retries, and stops once its outcome changed (then it is flaky, whatever comes next).
void suite_cell_run::rerun(suite_test &t) {
  for (int n = 0; n < m_x.retries && !m_r.stop; ++n) {
    const std::string tag = "r" + std::to_string(++m_reruns);
    const suite_process_result p = start(tag, t.nodeid);
    if (p.stopped)
      return;
    t.tries.push_back(rerun_try(p, t, tag));
    if (t.tries.back().result != t.tries.front().result)
      return;
  }
}

test_try suite_cell_run::rerun_try(const suite_process_result &p, const suite_test &t,
                                   const std::string &tag) const {
  if (p.junit)
    for (const auto &j : p.junit->tests)
      if (j.classname == t.classname && j.name == t.name)
        return junit_try(j, p.progress.find_junit(j.classname, j.name), p.junit_path, tag);
  if (const suite_test_progress *f = p.progress.in_flight(); f && p.ended_abnormally())
    return {p.timed_out ? outcome::timeout : outcome::crash,
            "the suite's process " + p.how_it_ended() + " during this test", p.in_flight_s(), tag};
  return {outcome::error,
          "the re-run did not run this test: its process " + p.how_it_ended() +
              " (log: " + p.log_path + ")",
          0, tag};
}

void suite_cell_run::record_test(suite_test &t) {
  const test_try &first = t.tries.front();
  bool changed = false;
  std::string sequence;
  json tries = json::array();
  for (const auto &x : t.tries) {
    changed = changed || x.result != first.result;
    sequence += (sequence.empty() ? "" : ", ") + std::string(to_string(x.result));
    tries.push_back({{"outcome", to_string(x.result)},
                     {"message", x.message},
                     {"time_s", x.time_s},
                     {"process", x.process}});
  }
  case_record r{.cell = m_cell.id,
                .case_id = t.case_id,
                .result = first.result,
                .message = first.message,
                .duration_ms = first.time_s * 1000};
  if (changed) {
    r.result = outcome::flaky;
    r.message = "changed outcome between tries: " + sequence + " (first: " + first.message + ")";
  } else if (t.tries.size() > 1) {
    r.message += " (the same in " + std::to_string(t.tries.size()) + " tries)";
  }
  json record = to_json(r);
  record["nodeid"] = t.nodeid;
  record["tries"] = tries;
  m_r.results.append(record);
  t.recorded = true;
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
                                  {"processes", m_processes},
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
