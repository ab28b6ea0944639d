// The shim's log (docs/fault-shim.md, "The shim's log"): what a process's faults did, written as
// it exits, so a delay that a latency verdict did not see can be looked for in the process.
#include "tools/fault_shim/shim_log.hpp"

#include "tools/fault_shim/shim_state.hpp"
#include "tools/faults/precise_delay.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unistd.h>

extern char **environ;

namespace cuparity::shim {

namespace {

constexpr const char *log_variable = "CUPARITY_SHIM_LOG";

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  while (!raw.empty() && raw.back() == '\0')
    raw.pop_back();
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  return raw.size() > 300 ? raw.substr(0, 300) + "..." : raw;
}

nlohmann::json binding_variables() {
  nlohmann::json vars = nlohmann::json::object();
  for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string item = *e;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (eq != std::string::npos &&
        (name.rfind("NUMBA_CUDA_", 0) == 0 || name.rfind("CUDA_PYTHON_", 0) == 0 ||
         name.rfind("CUPARITY_SHIM_", 0) == 0))
      vars[name] = item.substr(eq + 1);
  }
  return vars;
}

nlohmann::json slow_calls() {
  nlohmann::json calls = nlohmann::json::array();
  for (std::size_t i = 0; i < faults::symbol_count; ++i)
    for (std::size_t path = 0; path < 2; ++path)
      if (const auto n = g_slow_calls[i][path].load(std::memory_order_relaxed); n != 0)
        calls.push_back({{"symbol", faults::symbol_name(static_cast<symbol_id>(i))},
                         {"path", path == 0 ? "dlsym" : "proc"},
                         {"calls", n}});
  return calls;
}

nlohmann::json delay_figures() {
  const faults::delay_calibration &c = faults::calibration();
  const faults::loop_history h = faults::loop_history_now();
  return {{"loops_per_ns", c.loops_per_ns},
          {"entry_ns", c.entry_ns},
          {"long_entry_ns", c.long_entry_ns},
          {"short_overhead_loops", c.short_overhead_loops},
          {"long_overhead_loops", c.long_overhead_loops},
          {"tsc", c.tsc},
          {"counter_read_ns", c.counter_read_ns},
          {"counter_from_ns", c.counter_from_ns},
          {"rate_now", faults::loop_rate_now()},
          {"samples", h.samples},
          {"rate_min", h.rate_min},
          {"rate_max", h.rate_max},
          {"loop_calls", h.calls},
          {"calls_per_sample_min", h.calls_per_sample_min},
          {"calls_per_sample_max", h.calls_per_sample_max},
          {"debt_loops_now", h.debt_loops_now},
          {"debt_loops_max", h.debt_loops_max}};
}

// At exit (exit() or the end of main; not _exit or a signal), after the driver's last calls.
[[gnu::destructor]] void write_log_at_exit() {
  const char *path = std::getenv(log_variable);
  if (path == nullptr || *path == '\0')
    return;
  if (std::string why = append_log(path); !why.empty())
    report("error", std::string("cannot write ") + log_variable + "='" + path + "': " + why);
}

} // namespace

std::string log_line() {
  nlohmann::json line = {{"pid", static_cast<long long>(::getpid())},
                         {"command", command_line()},
                         {"variables", binding_variables()},
                         {"slow_calls", slow_calls()}};
  // Calibration only where a delay made it: asking for it elsewhere would calibrate at exit.
  if (state().faults.has_delay())
    line["delay"] = delay_figures();
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string append_log(const std::string &path) {
  std::string text;
  try {
    text = log_line() + "\n";
  } catch (const std::exception &e) { // a destructor at exit must not throw
    return std::string("could not form the line: ") + e.what();
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return std::strerror(errno);
  // One write with O_APPEND: lines from processes that exit together do not interleave.
  const ssize_t written = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()))
    return written < 0 ? std::strerror(saved) : "short write";
  return {};
}

} // namespace cuparity::shim
