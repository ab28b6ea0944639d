// Reading the plugin's progress lines into the tests a suite process started and ended.
#include "harness/external/suite_progress.hpp"

#include "harness/io/input_file.hpp"

#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity {

const suite_test_progress *suite_progress::in_flight() const {
  for (auto it = tests.rbegin(); it != tests.rend(); ++it)
    if (!it->ended)
      return &*it;
  return nullptr;
}

const suite_test_progress *suite_progress::find_junit(const std::string &classname,
                                                      const std::string &name) const {
  for (const auto &t : tests)
    if (t.classname == classname && t.name == name)
      return &t;
  return nullptr;
}

namespace {

std::string text_of(const nlohmann::json &j, const char *key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

void apply_progress_event(suite_progress &p, const nlohmann::json &ev) {
  const std::string event = text_of(ev, "event"), nodeid = text_of(ev, "nodeid");
  if (event == "collected" && ev.contains("count") && ev["count"].is_number_integer()) {
    p.collected = ev["count"].get<long>();
  } else if (event == "start" && !nodeid.empty()) {
    // A test started again in one process (pytest-rerunfailures) keeps its first place.
    if (p.by_nodeid.emplace(nodeid, p.tests.size()).second)
      p.tests.push_back({nodeid, text_of(ev, "classname"), text_of(ev, "name")});
    suite_test_progress &t = p.tests[p.by_nodeid[nodeid]];
    t.ended = false;
    if (ev.contains("time") && ev["time"].is_number())
      t.started_unix = ev["time"].get<double>();
  } else if (event == "collect_error" && !nodeid.empty()) {
    p.collect_errors.push_back(
        {nodeid, text_of(ev, "classname"), text_of(ev, "name"), text_of(ev, "message")});
  } else if (event == "stopped" && !p.stopped) {
    const char *count = text_of(ev, "reason") == "max_fails" ? "failures" : "count";
    p.stopped =
        suite_stop{text_of(ev, "reason"), text_of(ev, "message"),
                   ev.contains(count) && ev[count].is_number_integer() ? ev[count].get<long>() : 0};
  } else if (event == "end" && p.by_nodeid.count(nodeid)) {
    suite_test_progress &t = p.tests[p.by_nodeid[nodeid]];
    t.ended = true;
    t.outcome = text_of(ev, "outcome");
    t.message = text_of(ev, "message");
    t.when = text_of(ev, "when");
    if (ev.contains("duration") && ev["duration"].is_number())
      t.duration_s = ev["duration"].get<double>();
  }
}

/// One line of the file: an event, or skipped (a torn or foreign line).
void apply_progress_line(suite_progress &p, const std::string &line, const std::string &path) {
  try {
    const nlohmann::json ev = parse_json_input(line, path);
    if (ev.is_object())
      apply_progress_event(p, ev);
  } catch (const std::exception &) {
    // Not an event (parse_json_input bounds its depth): skipped, as the reader promises.
  }
}

} // namespace

int open_regular_file(const std::string &path) noexcept {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

suite_progress read_suite_progress(const std::string &path) {
  suite_progress p;
  const int fd = open_regular_file(path);
  if (fd < 0)
    return p;
  std::string line;
  bool too_long = false;
  std::size_t total = 0;
  char buf[65536];
  for (ssize_t got; total < max_input_bytes && (got = ::read(fd, buf, sizeof buf)) != 0;) {
    if (got < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    total += static_cast<std::size_t>(got);
    for (const char *at = buf, *end = buf + got; at < end;) {
      const char *nl = static_cast<const char *>(std::memchr(at, '\n', end - at));
      const char *stop = nl ? nl : end;
      const auto n = static_cast<std::size_t>(stop - at);
      too_long = too_long || line.size() + n > suite_progress_line_limit;
      if (!too_long)
        line.append(at, n);
      if (nl) {
        if (!too_long)
          apply_progress_line(p, line, path);
        line.clear();
        too_long = false;
      }
      at = nl ? nl + 1 : end;
    }
  }
  if (!too_long && !line.empty())
    apply_progress_line(p, line, path);
  ::close(fd);
  return p;
}

} // namespace cuparity
