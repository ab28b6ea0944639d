// The cell side of the helper server: start, requests, replies, shutdown.
#include "harness/framework/helper_client.hpp"

#include "harness/platform/self_exe.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/helper_protocol.hpp"

namespace cuparity {
namespace {

using steady = std::chrono::steady_clock;

double ms_since(steady::time_point t) {
  return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

enum class wait_status { event, timeout, eof };

/// Reads events until one of kind `kind`, or a cell_error, arrives.
wait_status next_event(child_process &p, event_kind kind, steady::time_point deadline,
                       nlohmann::json &ev) {
  std::string line;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0)
      return wait_status::timeout;
    const auto status = p.read_line(line, left);
    if (status == child_process::read_status::timeout)
      return wait_status::timeout;
    if (status == child_process::read_status::eof)
      return wait_status::eof;
    ev = nlohmann::json::parse(line, nullptr, false);
    const auto k = event_of(ev);
    if (k == kind || k == event_kind::cell_error)
      return wait_status::event;
  }
}

/// Ends the server: at once (SIGKILL to its group), or by closing its input and giving it 10 s to
/// release its context and exit.
process_result stop(child_process &server, bool at_once) noexcept {
  try {
    if (!at_once) {
      server.close_input();
      nlohmann::json ev;
      at_once = next_event(server, event_kind::helper_result,
                           steady::now() + std::chrono::seconds(10), ev) != wait_status::eof;
    }
    if (at_once)
      server.kill_group();
    return server.wait();
  } catch (...) {
    return {};
  }
}

} // namespace

helper_client &helper_client::instance() {
  static helper_client client;
  return client;
}

helper_client::~helper_client() {
  shutdown();
}

process_result helper_client::ended(const std::string &why, bool timed_out) {
  process_result r = stop(*m_server, timed_out);
  m_server.reset();
  m_starting = false;
  r.timed_out = timed_out;
  r.err = why;
  return r;
}

void helper_client::spawn() {
  process_spec spec;
  spec.argv = {self_executable(), "helper", "--serve", "--events-fd", "3"};
  spec.env = environment_with({});
  // Its stdout and stderr go where this process's stderr goes: the cell's log.
  m_server = std::make_unique<child_process>(spec, "/proc/self/fd/2", true);
  m_starting = true;
}

void helper_client::prestart() noexcept {
  if (m_server)
    return;
  try {
    spawn();
  } catch (...) {
    m_server.reset(); // call() tries again and reports why
  }
}

bool helper_client::await_start(std::chrono::milliseconds timeout, process_result &failure) {
  const auto asked = steady::now();
  if (!m_server)
    spawn();
  if (!m_starting)
    return true;
  m_starting = false;
  nlohmann::json ev;
  const auto status = next_event(*m_server, event_kind::cell_start, steady::now() + timeout, ev);
  m_costs.starts += 1;
  // What the case lost: a server started early (prestart) costs only what was left of its
  // start. Counting from the spawn instead charged the first helper case with the cases that
  // ran meanwhile (3.9 s per cell on the H200 at b0d00bb, most of it not waiting).
  m_costs.startup_ms += ms_since(asked);
  if (status == wait_status::event && event_of(ev) == event_kind::cell_start)
    return true;
  if (status == wait_status::timeout)
    failure = ended("the helper server did not start within " +
                        std::to_string(timeout.count() / 1000.0) + " s",
                    true);
  else if (status == wait_status::eof)
    failure = ended("the helper server ended before it started", false);
  else
    failure = ended("the helper server could not start: " + ev.value("message", ""), false);
  return false;
}

process_result helper_client::call(const std::string &name, const std::vector<std::string> &args,
                                   std::chrono::milliseconds timeout) {
  process_result r;
  if (!await_start(timeout, r))
    return r;
  const auto t0 = steady::now();
  struct add_time {
    helper_costs &costs;
    steady::time_point t0;
    ~add_time() { costs.requests_ms += ms_since(t0); }
  } timed{m_costs, t0};
  if (!m_server->send_line(to_line(helper_request{name, args})))
    return ended("the helper server no longer reads requests", false);
  nlohmann::json ev;
  const auto status = next_event(*m_server, event_kind::helper_result, t0 + timeout, ev);
  if (status == wait_status::timeout)
    return ended("helper '" + name + "' did not answer within " +
                     std::to_string(timeout.count() / 1000.0) + " s",
                 true);
  if (status == wait_status::eof)
    return ended("the helper server ended during '" + name + "'", false);
  const auto reply = helper_reply_of(ev);
  if (!reply)
    return ended("the helper server answered '" + name + "' with no helper_result", true);
  r.exited = true;
  r.exit_code = reply->exit_code;
  r.out = reply->out;
  r.err = reply->err;
  if (reply->exit_code != 0)
    (void)ended("", false); // a failed helper's process is not reused
  return r;
}

void helper_client::shutdown() noexcept {
  if (m_server)
    (void)stop(*m_server, false);
  m_server.reset();
  m_starting = false;
}

helper_costs helper_client::take_costs() noexcept {
  helper_costs c = m_costs;
  m_costs = {};
  return c;
}

} // namespace cuparity
