// Reading the audit library's event lines. The library writes them from inside other processes,
// which may die mid-line: a line that is not one whole event is counted, never fatal.
#include "harness/capture/capture_events.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cuparity {
namespace {

using json = nlohmann::json;

std::string text(const json &o, const char *key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::string> optional_text(const json &o, const char *key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_string())
    return std::nullopt;
  return it->get<std::string>();
}

long long number(const json &o, const char *key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

/// flags are unsigned 64-bit: a value of 2^63 or more must not turn negative.
std::uint64_t unsigned_number(const json &o, const char *key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer())
    return 0;
  return it->is_number_unsigned() ? it->get<std::uint64_t>()
                                  : static_cast<std::uint64_t>(it->get<long long>());
}

bool flag(const json &o, const char *key) {
  return number(o, key) != 0;
}

captured_process read_header(const json &h) {
  captured_process p;
  p.pid = static_cast<long>(number(h, "pid"));
  p.ppid = static_cast<long>(number(h, "ppid"));
  p.forked = flag(h, "forked");
  p.exe = text(h, "exe");
  if (const auto a = h.find("argv"); a != h.end() && a->is_array())
    for (const auto &s : *a)
      if (s.is_string())
        p.argv.push_back(s.get<std::string>());
  if (const auto e = h.find("environment"); e != h.end() && e->is_object())
    for (const auto &[k, v] : e->items())
      if (v.is_string())
        p.environment[k] = v.get<std::string>();
  return p;
}

proc_event read_proc(const json &e) {
  proc_event r;
  r.abi = text(e, "abi");
  r.symbol = text(e, "symbol");
  r.version = number(e, "version");
  r.flags = unsigned_number(e, "flags");
  r.result = static_cast<int>(number(e, "result"));
  if (e.contains("status"))
    r.status = static_cast<int>(number(e, "status"));
  r.null_pointer = text(e, "pointer") == "0x0";
  r.pointer_symbol = optional_text(e, "pointer_symbol");
  r.pointer_library = optional_text(e, "pointer_library");
  r.caller = text(e, "caller");
  r.wrapped = flag(e, "wrapped");
  return r;
}

/// Adds one event to `p`; false when it is no event this reader knows.
bool add_event(captured_process &p, const json &e) {
  if (!e.is_object())
    return false;
  const std::string kind = text(e, "event");
  if (kind == "object") {
    p.objects.push_back(text(e, "path"));
    if (flag(e, "driver"))
      p.drivers.push_back(p.objects.back());
  } else if (kind == "bind") {
    p.binds.push_back({text(e, "via"), text(e, "symbol"), text(e, "library"), text(e, "caller"),
                       flag(e, "wrapped")});
  } else if (kind == "proc") {
    p.requests.push_back(read_proc(e));
  } else if (kind == "lost") {
    p.lost.push_back({static_cast<long>(number(e, "pid")), text(e, "exe"),
                      "could not write its events as uid " + std::to_string(number(e, "uid")) +
                          ": " + text(e, "error")});
  } else {
    return false;
  }
  return true;
}

/// A member of a package table event that is not what the hook writes.
struct bad_table : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<std::string> table_text(const json &o, const char *key, bool nullable) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_string())
    return it->get<std::string>();
  if (nullable && it != o.end() && it->is_null())
    return std::nullopt;
  throw bad_table(std::string(key) + ": expected a string" + (nullable ? " or null" : ""));
}

std::optional<table_pointer> read_pointer(const std::string &name, const json &v) {
  if (v.is_null())
    return std::nullopt;
  if (!v.is_object())
    throw bad_table("functions." + name + ": expected an object or null");
  try {
    return table_pointer{table_text(v, "symbol", true), table_text(v, "library", true)};
  } catch (const bad_table &e) {
    throw bad_table("functions." + name + "." + e.what());
  }
}

void read_table(const json &t, package_table_event &r) {
  if (!t.is_object() || text(t, "event") != "package_table")
    throw bad_table("not a package_table event");
  if (number(t, "pid") != r.pid)
    throw bad_table("pid: expected " + std::to_string(r.pid) + ", as the file is named");
  r.package = *table_text(t, "package", false);
  r.version = table_text(t, "version", true);
  r.module = table_text(t, "module", true);
  r.module_file = table_text(t, "file", true);
  r.folder = table_text(t, "folder", true);
  r.status = *table_text(t, "status", false);
  if (r.status != "ok" && r.status != "not_bound" && r.status != "no_table" && r.status != "failed")
    throw bad_table("status: expected ok, not_bound, no_table or failed, not \"" + r.status + "\"");
  r.why = *table_text(t, "why", false);
  const auto f = t.find("functions");
  if (f == t.end() || !f->is_object())
    throw bad_table("functions: expected an object");
  for (const auto &[name, v] : f->items())
    r.functions[name] = read_pointer(name, v);
}

} // namespace

std::vector<package_table_event> read_package_tables(const std::string &dir) {
  std::vector<package_table_event> out;
  std::error_code ec;
  for (const auto &f : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    if (!name.starts_with("package-table-") || !name.ends_with(".json"))
      continue;
    package_table_event r;
    r.file = name;
    const std::string digits = name.substr(14, name.size() - 14 - 5);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue; // not a name the hook writes (its pid is a pid_t)
    r.pid = std::stol(digits);
    std::ifstream in(f.path());
    const json t = json::parse(in, nullptr, false);
    try {
      read_table(t, r);
    } catch (const bad_table &e) {
      // The hook writes the file whole (a rename): a bad one is its own fault, said as such.
      r = {name,
           r.pid,
           "cuda.bindings",
           {},
           {},
           {},
           {},
           "failed",
           name + ": " + (t.is_discarded() ? std::string("not JSON") : std::string(e.what())),
           {}};
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.pid < b.pid; });
  return out;
}

std::vector<captured_process> read_capture_dir(const std::string &dir,
                                               std::vector<std::string> &problems) {
  std::vector<captured_process> out;
  std::error_code ec;
  for (const auto &f : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    if (!name.starts_with("process-") || !name.ends_with(".jsonl"))
      continue;
    std::ifstream in(f.path());
    std::string line;
    if (!std::getline(in, line)) {
      problems.push_back(name + ": empty");
      continue;
    }
    const json h = json::parse(line, nullptr, false);
    if (!h.is_object() || text(h, "event") != "process") {
      // Its process is lost: the line is cut or garbled (the library bounds it, so never so far).
      problems.push_back(name + ": the first line (" + std::to_string(line.size()) +
                         " bytes) is no process line");
      continue;
    }
    captured_process p = read_header(h);
    while (std::getline(in, line)) {
      if (line.empty())
        continue;
      const json e = json::parse(line, nullptr, false);
      if (e.is_object() && text(e, "event") == "process") {
        // An exec in the same pid: what follows belongs to the new image.
        const int image = p.image + 1;
        out.push_back(std::move(p));
        p = read_header(e);
        p.image = image;
      } else if (!add_event(p, e)) {
        ++p.unreadable_lines;
      }
    }
    out.push_back(std::move(p));
  }
  if (ec)
    problems.push_back(dir + ": " + ec.message());
  // Parents before their children: a child's pid is not always larger (pid wrap-around), so
  // order by depth in the tree first.
  const auto depth = [&out](const captured_process &p) {
    int d = 0;
    for (long parent = p.ppid; d < 64;) {
      const auto it = std::find_if(out.begin(), out.end(),
                                   [parent](const captured_process &q) { return q.pid == parent; });
      if (it == out.end())
        break;
      ++d;
      parent = it->ppid;
    }
    return d;
  };
  std::vector<std::pair<int, std::size_t>> order;
  for (std::size_t i = 0; i < out.size(); ++i)
    order.emplace_back(depth(out[i]), i);
  std::sort(order.begin(), order.end(), [&out](const auto &a, const auto &b) {
    const captured_process &x = out[a.second], &y = out[b.second];
    if (a.first != b.first)
      return a.first < b.first;
    return x.pid != y.pid ? x.pid < y.pid : x.image < y.image;
  });
  std::vector<captured_process> sorted;
  for (const auto &o : order)
    sorted.push_back(std::move(out[o.second]));
  return sorted;
}

} // namespace cuparity
