// Fault coverage: the control run, one run per (symbol, fault) trial, and what caught each.
#include "harness/fault_coverage/fault_coverage.hpp"

#include "harness/config/env_vars.hpp"
#include "harness/io/input_file.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// Writes a trial's small file (console.txt, trial.json) whole; a write that fails (a full disk)
/// ends the fault run, naming the file: a trial without its record would read as not run.
void write_trial_file(const std::string &path, const std::string &text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  int e = fd < 0 ? errno : 0;
  for (std::size_t done = 0; fd >= 0 && !e && done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      e = n < 0 ? errno : EIO;
    else
      done += static_cast<std::size_t>(n);
  }
  if (fd >= 0 && close(fd) != 0 && !e)
    e = errno;
  if (e)
    throw faults_environment_error(path + ": " + std::strerror(e));
}

/// The last line of a run's stderr with text on it (what it said before it stopped), shortened.
std::string last_words(const std::string &err) {
  const std::size_t end = err.find_last_not_of(" \t\r\n");
  if (end == std::string::npos)
    return "it said nothing on stderr";
  const std::size_t newline = err.find_last_of('\n', end);
  const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
  const std::string line = err.substr(begin, end + 1 - begin);
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

/// The library under test and how it takes faults.
struct fault_library {
  std::string path;
  std::string variable; ///< CUPARITY_SIM_FAULTS or CUPARITY_SHIM_FAULTS
  using support_fn = const char *(*)(const char *);
  support_fn support = nullptr; ///< cuparity_fault_support: null when a fault applies
};

fault_library open_fault_library(const std::string &path) {
  fault_library lib{path, "", nullptr};
  void *h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!h)
    throw std::runtime_error("cannot open the driver under test " + path + ": " + dlerror());
  // Left open: the shim's target stays loaded for the process's life either way.
  if (dlsym(h, "cuparity_fault_shim_target_symbol"))
    lib.variable = "CUPARITY_SHIM_FAULTS";
  else if (dlsym(h, "cuparity_simulated_driver"))
    lib.variable = "CUPARITY_SIM_FAULTS";
  else
    throw bad_input_error(path + " takes no faults: give the simulated driver (--driver sim) or "
                                 "the fault shim (--shim)");
  lib.support = reinterpret_cast<fault_library::support_fn>(dlsym(h, "cuparity_fault_support"));
  return lib;
}

std::string slug_text(std::string s) {
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '-';
  return s;
}

struct run_request {
  std::string dir;
  std::vector<std::string> cases; ///< empty: the matrix's own
  std::string spec;               ///< "" for the control
};

struct run_outcome {
  bool ran = false; ///< a summary.json was written
  json summary;
  int exit_code = -1;
  std::string note;
  std::string last_words; ///< the last line of its stderr
};

class trial_runner {
public:
  trial_runner(const fault_coverage_options &opt, fault_library lib)
      : m_opt(opt), m_lib(std::move(lib)), m_env(current_environment()) {
    m_env[var::driver] = m_lib.path;
    if (!opt.target.empty())
      m_env["CUPARITY_SHIM_TARGET"] = opt.target;
    if (!opt.devices.empty())
      m_env["CUPARITY_SIM_DEVICES"] = opt.devices;
    m_env.erase(m_lib.variable);
  }

  [[nodiscard]] const fault_library &library() const { return m_lib; }

  run_outcome run(const run_request &r) const {
    process_spec spec;
    spec.argv = {self_executable(),
                 "run",
                 m_opt.matrix,
                 "--out",
                 r.dir,
                 "--no-latency",
                 "--no-summary-md", // one trial of many: not a page of the CI job's summary
                 "-j",
                 std::to_string(m_opt.cell_jobs)};
    for (const auto &c : r.cases)
      spec.argv.insert(spec.argv.end(), {"--case", c});
    spec.env = m_env;
    if (!r.spec.empty())
      spec.env[m_lib.variable] = r.spec;
    // The simulated driver has no GPU to share: each trial gets a lock of its own, so trials run
    // side by side. In front of a real driver they share the caller's lock.
    if (m_lib.variable == "CUPARITY_SIM_FAULTS")
      spec.env[gpu_lock_variable] = r.dir + "/gpu-lock";
    spec.timeout = std::chrono::minutes(20);
    try {
      fs::remove_all(r.dir);
      fs::create_directories(r.dir);
    } catch (const fs::filesystem_error &e) {
      throw faults_environment_error(r.dir + ": " + e.code().message());
    }
    run_outcome out;
    const process_result p = run_process(spec);
    out.exit_code = p.exited ? p.exit_code : -p.signal;
    out.last_words = last_words(p.err);
    try {
      write_trial_file(r.dir + "/console.txt", p.out + p.err);
    } catch (const faults_environment_error &e) {
      // Often the run's own failure has the same cause (a full disk): both are worth reading.
      throw faults_environment_error(std::string(e.what()) + " (the run it records exited " +
                                     std::to_string(out.exit_code) + ": " + out.last_words + ")");
    }
    return read_outcome(r.dir, std::move(out), p);
  }

  static run_outcome read_outcome(const std::string &dir, run_outcome out,
                                  const process_result &p) {
    std::ifstream in(dir + "/summary.json");
    if (!in) {
      out.note =
          "no summary.json (exit " + std::to_string(out.exit_code) + "): " + p.err.substr(0, 300);
      return out;
    }
    try {
      out.summary = json::parse(in);
      out.ran = true;
    } catch (const json::exception &e) {
      out.note = std::string("summary.json is not JSON: ") + e.what();
    }
    return out;
  }

private:
  const fault_coverage_options &m_opt;
  fault_library m_lib;
  std::map<std::string, std::string> m_env;
};

/// Exported symbol -> the entry it was bound for, over every cell's binding map.
std::map<std::string, std::string> bound_symbols(const std::string &results_path) {
  std::map<std::string, std::string> out;
  for (const auto &r : read_results(results_path).records) {
    if (!is_record(r, record_type::binding_map))
      continue;
    for (const auto &row : r.value("map", json::array())) {
      if (!row.is_object() || row.value("missing", false))
        continue;
      std::string sym = row.value("exported", "");
      if (sym.empty())
        sym = row.value("symbol", "");
      if (!sym.empty())
        out.emplace(sym, row.value("entry", ""));
    }
  }
  return out;
}

bool selected(const std::vector<std::string> &globs, const std::string &name) {
  if (globs.empty())
    return true;
  return std::any_of(globs.begin(), globs.end(), [&](const std::string &g) {
    return fnmatch(g.c_str(), name.c_str(), 0) == 0;
  });
}

/// Refuses a --symbol glob that matches none of `names` (a typo would select no trial and pass).
template <typename names_t>
void check_globs(const std::vector<std::string> &globs, const names_t &names,
                 const std::string &what) {
  for (const auto &g : globs) {
    const bool any = std::any_of(names.begin(), names.end(), [&](const auto &n) {
      return fnmatch(g.c_str(), std::string(n).c_str(), 0) == 0;
    });
    if (!any)
      throw bad_input_error("--symbol '" + g + "': matches no " + what);
  }
}

/// The control run: it must have run and be equivalent, or no trial can be judged against it.
void check_control(const run_outcome &control, const std::string &dir) {
  if (control.ran && control.exit_code == 0)
    return;
  const std::string said = ": " + control.last_words + " (see " + dir + "/console.txt)";
  const std::string code = " (exit " + std::to_string(control.exit_code) + ")";
  if (control.exit_code == 2)
    throw bad_input_error("the control run without faults refused its input" + code + said);
  if (control.ran && control.exit_code == 1)
    throw bad_input_error("the control run without faults is not equivalent" + code + said);
  throw faults_environment_error("the control run without faults could not go on" + code + said);
}

bool is_per_thread(const std::string &symbol) {
  return symbol.ends_with("_ptsz") || symbol.ends_with("_ptds");
}

/// The trials of one symbol, in the order the table lists them.
std::vector<fault_trial> trials_of(const std::string &symbol, const std::string &entry,
                                   const fault_coverage_options &opt) {
  const std::vector<std::string> paths =
      opt.paths.empty() ? std::vector<std::string>{"any", "dlsym", "proc"} : opt.paths;
  std::vector<fault_trial> out;
  const auto add = [&](const char *kind, const char *fault, bool every_path) {
    if (!selected(opt.kinds, kind))
      return;
    for (const auto &p : paths)
      if (every_path || p == "any")
        out.push_back({symbol, entry, fault, p});
  };
  add("error", "error=999", true);
  add("not_supported", "error=801", true);
  add("corrupt", "corrupt", false);
  if (is_per_thread(symbol))
    add("legacy", "legacy", false);
  return out;
}

/// What a failed run blames: each problem's case (or kind and cell), each divergence's case.
std::vector<std::string> blamed(const json &summary) {
  std::set<std::string> out;
  for (const auto &p : summary.value("problems", json::array())) {
    const std::string c = p.value("case", "");
    out.insert(!c.empty() ? c : p.value("kind", "problem") + ":" + p.value("cell", ""));
  }
  for (const auto &d : summary.value("divergences", json::array()))
    out.insert(d.value("case", "") + " (divergence)");
  if (const auto cov = summary.find("coverage"); cov != summary.end() && cov->is_object())
    if (!cov->value("complete", true))
      out.insert("coverage: incomplete");
  return {out.begin(), out.end()};
}

trial_result judge(const fault_trial &t, const run_outcome &o) {
  trial_result r{t};
  r.ran = o.ran;
  r.exit_code = o.exit_code;
  r.note = o.note;
  if (!o.ran) {
    // A run that could not even write its summary failed loudly: caught, but the report a
    // validator needs is missing, which is worth saying. A trial that never ran caught nothing.
    r.caught = o.exit_code > 0;
    return r;
  }
  r.verdict = o.summary.value("verdict", "");
  r.by = blamed(o.summary);
  r.caught = o.exit_code != 0 && (!r.by.empty() || o.exit_code == 3);
  return r;
}

/// A trial recorded by an earlier run (--resume): its folder holds the same spec and a summary.
std::optional<trial_result> recorded(const fault_trial &t, const std::string &dir) {
  std::ifstream spec_file(dir + "/trial.json");
  if (!spec_file)
    return std::nullopt;
  try {
    const json j = json::parse(spec_file);
    if (j.value("spec", "") != t.spec())
      return std::nullopt;
    run_outcome o;
    o.exit_code = j.value("exit_code", -1);
    o = trial_runner::read_outcome(dir, std::move(o), process_result{});
    return judge(t, o);
  } catch (const json::exception &) {
    return std::nullopt;
  }
}

std::string trial_line(const trial_result &r) {
  std::string by;
  for (std::size_t i = 0; i < r.by.size() && i < 3; ++i)
    by += (i ? ", " : "") + r.by[i];
  if (r.by.size() > 3)
    by += ", +" + std::to_string(r.by.size() - 3);
  return r.trial.spec() + ": " +
         (r.caught ? "caught (exit " + std::to_string(r.exit_code) + ") by " + by
                   : "NOT CAUGHT (exit " + std::to_string(r.exit_code) + ")") +
         (r.note.empty() ? "" : " [" + r.note.substr(0, 120) + "]");
}

/// The trials of the selected bound symbols; the faults the library refuses go to
/// `not_applicable`. A selection that leaves no trial is refused: nothing tried is no coverage.
std::vector<fault_trial> plan_trials(const std::map<std::string, std::string> &bound,
                                     const fault_coverage_options &opt, const fault_library &lib,
                                     std::vector<std::string> &not_applicable) {
  std::vector<fault_trial> plan;
  for (const auto &[symbol, entry] : bound)
    if (selected(opt.symbols, symbol))
      for (auto &t : trials_of(symbol, entry, opt)) {
        const char *why = lib.support ? lib.support(t.spec().c_str()) : nullptr;
        if (why)
          not_applicable.push_back(t.spec() + ": " + why);
        else
          plan.push_back(std::move(t));
      }
  if (plan.empty())
    throw bad_input_error(
        "no trial to run: --symbol, --kind and --path select none" +
        (not_applicable.empty() ? std::string()
                                : " the driver takes (" + std::to_string(not_applicable.size()) +
                                      " do not apply, e.g. " + not_applicable.front() + ")") +
        "; corrupt and legacy are tried on both paths only (--path any), legacy on _ptds/_ptsz "
        "symbols only");
  return plan;
}

} // namespace

std::string fault_trial::spec() const {
  return symbol + ":" + fault + (path == "any" ? "" : "@" + path);
}

std::string fault_trial::slug() const {
  return slug_text(symbol + "_" + fault + "_" + path);
}

std::string fault_trial::fault_class() const {
  const std::string where = path == "any" ? "both paths" : path + " path only";
  if (fault == "error=999")
    return "error 999 (" + where + ")";
  if (fault == "error=801")
    return "NOT_SUPPORTED (" + where + ")";
  return fault + " (" + where + ")";
}

const std::vector<std::string> &exported_symbols() {
  static const std::vector<std::string> names{
#define CUPARITY_EXPORTED_SYMBOL(sym) #sym,
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
  };
  return names;
}

fault_coverage run_fault_coverage(const fault_coverage_options &opt, const cases_of_entry &cases,
                                  const std::function<void(const std::string &)> &progress) {
  check_globs(opt.symbols, exported_symbols(),
              "symbol the driver exports (fnmatch globs of exported names, such as "
              "cuMemcpyDtoH_v2 or 'cuMemcpy*')");
  // The shim reads its target when it loads: here too, so it opens the one the trials use.
  if (!opt.target.empty())
    setenv("CUPARITY_SHIM_TARGET", opt.target.c_str(), 1);
  trial_runner runner(opt, open_fault_library(opt.driver));
  fault_coverage out;
  out.driver = opt.driver;
  out.matrix = opt.matrix;
  const run_outcome control = runner.run({opt.out + "/control", {}, ""});
  check_control(control, opt.out + "/control");
  const auto bound = bound_symbols(opt.out + "/control/results.jsonl");
  for (const auto &name : exported_symbols())
    (bound.count(name) ? out.bound : out.unbound).push_back(name);
  std::vector<std::string> bound_names;
  for (const auto &b : bound)
    bound_names.push_back(b.first);
  check_globs(opt.symbols, bound_names,
              "symbol a cell of the control run bound (" + std::to_string(bound_names.size()) +
                  " were, listed in " + opt.out + "/control/results.jsonl's binding maps)");
  const std::vector<fault_trial> plan =
      plan_trials(bound, opt, runner.library(), out.not_applicable);
  out.trials.resize(plan.size());
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex report_lock;
  std::exception_ptr stopped; // the first trial whose files could not be written ends the run
  const auto worker = [&] {
    for (std::size_t i = next++; i < plan.size(); i = next++) {
      const fault_trial &t = plan[i];
      const std::string dir = opt.out + "/trials/" + t.slug();
      std::optional<trial_result> r = opt.resume ? recorded(t, dir) : std::nullopt;
      if (!r) {
        run_outcome o;
        try {
          o = runner.run({dir, cases(t.entry), t.spec()});
          write_trial_file(dir + "/trial.json",
                           json{{"spec", t.spec()}, {"exit_code", o.exit_code}}.dump() + "\n");
        } catch (const faults_environment_error &) {
          const std::lock_guard<std::mutex> g(report_lock);
          if (!stopped)
            stopped = std::current_exception();
          next = plan.size();
          return;
        } catch (const std::exception &e) {
          // A trial that cannot start (the executable replaced under a long run) is recorded as
          // not run, and the others go on: nothing escapes a worker thread.
          o.note = std::string("the trial could not run: ") + e.what();
        }
        r = judge(t, o);
      }
      out.trials[i] = std::move(*r);
      const std::lock_guard<std::mutex> g(report_lock);
      progress("[" + std::to_string(++done) + "/" + std::to_string(plan.size()) + "] " +
               trial_line(out.trials[i]));
    }
  };
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, opt.jobs); ++j)
    pool.emplace_back(worker);
  for (auto &t : pool)
    t.join();
  if (stopped)
    std::rethrow_exception(stopped);
  return out;
}

json fault_coverage_json(const fault_coverage &c) {
  json trials = json::array();
  std::map<std::string, std::pair<int, int>> totals; // class -> (caught, tried)
  for (const auto &r : c.trials) {
    trials.push_back({{"symbol", r.trial.symbol},
                      {"entry", r.trial.entry},
                      {"fault", r.trial.fault},
                      {"path", r.trial.path},
                      {"spec", r.trial.spec()},
                      {"caught", r.caught},
                      {"exit_code", r.exit_code},
                      {"verdict", r.verdict},
                      {"by", r.by},
                      {"note", r.note}});
    auto &t = totals[r.trial.fault_class()];
    t.first += r.caught ? 1 : 0;
    t.second += 1;
  }
  json by_class = json::object();
  for (const auto &[k, v] : totals)
    by_class[k] = {{"caught", v.first}, {"tried", v.second}};
  return {{"schema", faults_schema}, {"driver", c.driver},   {"matrix", c.matrix},
          {"bound", c.bound},        {"unbound", c.unbound}, {"not_applicable", c.not_applicable},
          {"totals", by_class},      {"trials", trials}};
}

void print_fault_table(std::ostream &out, const fault_coverage &c) {
  const json j = fault_coverage_json(c);
  out << "# Fault coverage\n\nDriver under test: `" << c.driver << "`; matrix `" << c.matrix
      << "`. " << c.bound.size() << " exported symbols bound by some cell, " << c.unbound.size()
      << " by none.\n\n| fault | caught | tried |\n|---|---|---|\n";
  for (const auto &[k, v] : j["totals"].items())
    out << "| " << k << " | " << v["caught"] << " | " << v["tried"] << " |\n";
  out << "\n## Not caught\n\n";
  bool any = false;
  for (const auto &r : c.trials)
    if (!r.caught) {
      out << "- `" << r.trial.spec() << "` (exit " << r.exit_code << ")"
          << (r.note.empty() ? "" : ": " + r.note) << "\n";
      any = true;
    }
  if (!any)
    out << "None.\n";
  out << "\n## Every trial\n\n| symbol | fault | path | caught by |\n|---|---|---|---|\n";
  for (const auto &r : c.trials) {
    // The first few catching cases; faults.json lists every one.
    std::string by;
    for (std::size_t i = 0; i < r.by.size() && i < 4; ++i)
      by += (by.empty() ? "" : ", ") + r.by[i];
    if (r.by.size() > 4)
      by += " and " + std::to_string(r.by.size() - 4) + " more";
    out << "| " << r.trial.symbol << " | " << r.trial.fault << " | " << r.trial.path << " | "
        << (r.caught ? by : "**not caught**") << " |\n";
  }
  out << "\n## Faults that do not apply\n\n";
  for (const auto &n : c.not_applicable)
    out << "- " << n << "\n";
  out << "\n## Exported symbols no cell binds\n\n";
  for (const auto &s : c.unbound)
    out << "`" << s << "` ";
  out << "\n";
}

} // namespace cuparity
