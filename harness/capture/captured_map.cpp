// Reading binding maps strictly: a member of the wrong kind is an error naming file and member,
// never a default (a misspelt "flags" must not read as legacy).
#include "harness/capture/captured_map.hpp"

#include "harness/io/input_file.hpp"

#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// A pid is a pid_t (int): 1 up, 0 only for a parent outside the namespace.
constexpr long long k_pid_max = INT32_MAX;

[[noreturn]] void bad(const std::string &path, const std::string &member,
                      const std::string &problem) {
  throw map_error(path + ": " + member + ": " + problem);
}

/// One JSON object being read, which knows where it sits in the file.
struct reader {
  const std::string &path;
  const json &o;
  std::string where; ///< "entries[3]." etc.

  /// The member, or the error "expected <kind>" when it is absent.
  const json &member(const char *key, const char *kind) const {
    const auto it = o.find(key);
    if (it == o.end())
      bad(path, where + key, std::string("expected ") + kind);
    return *it;
  }
  std::string text(const char *key) const {
    const json &v = member(key, "a string");
    if (!v.is_string())
      bad(path, where + key, "expected a string");
    return v.get<std::string>();
  }
  std::optional<std::string> nullable_text(const char *key) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null())
      return std::nullopt;
    if (!it->is_string())
      bad(path, where + key, "expected a string or null");
    return it->get<std::string>();
  }
  long long integer(const char *key) const {
    const json &v = member(key, "an integer");
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      bad(path, where + key, "expected an integer");
    return v.get<long long>();
  }
  /// An integer from `low` to `high`, else the error names the member and the range.
  long long integer(const char *key, long long low, long long high) const {
    const long long v = integer(key);
    if (v < low || v > high)
      bad(path, where + key,
          "expected an integer from " + std::to_string(low) + " to " + std::to_string(high));
    return v;
  }
  std::optional<long long> nullable_integer(const char *key) const {
    const json &v = member(key, "an integer or null");
    if (v.is_null())
      return std::nullopt;
    return integer(key);
  }
  const json &object(const char *key) const {
    const json &v = member(key, "an object");
    if (!v.is_object())
      bad(path, where + key, "expected an object");
    return v;
  }
  const json &array(const char *key) const {
    const json &v = member(key, "an array");
    if (!v.is_array())
      bad(path, where + key, "expected an array");
    return v;
  }
  reader at(const json &child, const std::string &name) const {
    if (!child.is_object())
      bad(path, where + name, "expected an object");
    return {path, child, where + name + "."};
  }
};

proc_request read_request(const reader &r) {
  proc_request q;
  q.abi = r.text("abi");
  if (q.abi != "cuGetProcAddress_v2" && q.abi != "cuGetProcAddress")
    bad(r.path, r.where + "abi",
        "expected cuGetProcAddress_v2 or cuGetProcAddress, not \"" + q.abi + "\"");
  q.version = r.integer("version", INT32_MIN, INT32_MAX);
  const json &flags = r.member("flags", "a non-negative integer");
  if (!flags.is_number_unsigned() && !(flags.is_number_integer() && flags.get<long long>() >= 0))
    bad(r.path, r.where + "flags", "expected a non-negative integer");
  q.flags = flags.get<std::uint64_t>(); // all 64 bits: a flag of 2^63 is still a flag
  q.result = static_cast<int>(r.integer("result", INT32_MIN, INT32_MAX));
  if (const auto status = r.nullable_integer("status")) {
    if (*status < INT32_MIN || *status > INT32_MAX)
      bad(r.path, r.where + "status", "expected an integer that fits 32 bits");
    q.status = static_cast<int>(*status);
  }
  return q;
}

captured_entry read_entry(const reader &r, int schema) {
  captured_entry e{r.text("function"), r.text("raw_name"), r.nullable_text("symbol"),
                   r.nullable_text("library")};
  if (schema < 2)
    return e;
  e.source = r.text("source");
  if (e.source != "plt" && e.source != "dlsym" && e.source != "proc")
    bad(r.path, r.where + "source", "expected plt, dlsym or proc, not \"" + e.source + "\"");
  e.process = static_cast<long>(r.integer("process", 1, k_pid_max));
  e.image = static_cast<int>(r.integer("image", 0, INT32_MAX));
  e.caller = r.text("caller");
  e.caller_package = r.nullable_text("caller_package");
  const json &q = r.member("request", "an object or null");
  if (e.source == "proc") {
    if (q.is_null())
      bad(r.path, r.where + "request", "a proc entry needs its request");
    e.request = read_request(r.at(q, "request"));
  } else if (!q.is_null()) {
    bad(r.path, r.where + "request", "expected null for a " + e.source + " entry");
  }
  const long long count = r.integer("count");
  if (count < 1)
    bad(r.path, r.where + "count", "expected a count of at least 1");
  e.count = static_cast<std::size_t>(count);
  return e;
}

map_process read_process(const reader &r) {
  map_process p;
  p.pid = static_cast<long>(r.integer("pid", 1, k_pid_max));
  p.image = static_cast<int>(r.integer("image", 0, INT32_MAX));
  p.ppid = static_cast<long>(r.integer("ppid", 0, k_pid_max));
  for (const auto &a : r.array("argv")) {
    if (!a.is_string())
      bad(r.path, r.where + "argv", "expected strings");
    p.argv.push_back(a.get<std::string>());
  }
  for (const auto &[k, v] : r.object("environment").items()) {
    if (!v.is_string())
      bad(r.path, r.where + "environment." + k, "expected a string");
    p.environment[k] = v.get<std::string>();
  }
  for (const auto &name : r.array("packages")) {
    if (!name.is_string())
      bad(r.path, r.where + "packages", "expected strings");
    p.packages.insert(name.get<std::string>());
  }
  return p;
}

/// The members only a process tree's map has: the command's end, the driver, the processes.
void read_process_tree(const reader &top, captured_map &m) {
  (void)top.integer("exit_status", 0, 255 + 128);
  const reader driver = top.at(top.object("driver"), "driver");
  m.driver_path = driver.nullable_text("path").value_or("");
  m.driver_version = driver.nullable_integer("version");
  const json &procs = top.array("processes");
  for (std::size_t i = 0; i < procs.size(); ++i) {
    const std::string where = "processes[" + std::to_string(i) + "]";
    map_process p = read_process(top.at(procs[i], where));
    // One record per image: a second would make every entry of it ambiguous.
    for (std::size_t k = 0; k < m.processes.size(); ++k)
      if (m.processes[k].pid == p.pid && m.processes[k].image == p.image)
        bad(m.path, where,
            "pid " + std::to_string(p.pid) + " image " + std::to_string(p.image) +
                " again (processes[" + std::to_string(k) + "] is the same image)");
    m.processes.push_back(std::move(p));
  }
}

std::optional<table_pointer> read_table_pointer(const reader &r, const std::string &name,
                                                const json &v) {
  if (v.is_null())
    return std::nullopt;
  const reader p = r.at(v, "functions." + name);
  return table_pointer{p.nullable_text("symbol"), p.nullable_text("library")};
}

package_table read_table(const reader &r) {
  package_table t;
  t.process = static_cast<long>(r.integer("process", 1, k_pid_max));
  t.image = static_cast<int>(r.integer("image", 0, INT32_MAX));
  t.package = r.text("package");
  t.version = r.nullable_text("version");
  t.module = r.nullable_text("module");
  t.file = r.nullable_text("file");
  t.folder = r.nullable_text("folder");
  t.status = r.text("status");
  if (t.status != "ok" && t.status != "not_bound" && t.status != "no_table" &&
      t.status != "failed" && t.status != "not_recorded")
    bad(r.path, r.where + "status",
        "expected ok, not_bound, no_table, failed or not_recorded, not \"" + t.status + "\"");
  t.note = r.text("note");
  for (const auto &[name, v] : r.object("functions").items())
    t.functions[name] = read_table_pointer(r, name, v);
  return t;
}

/// package_tables[]: optional (a map written before it existed has none), strict when present.
void read_package_tables(const reader &top, captured_map &m) {
  if (!top.o.contains("package_tables"))
    return;
  if (m.schema != 2)
    bad(m.path, "package_tables", "only a binding_map/2 has package tables");
  const json &tables = top.array("package_tables");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const std::string where = "package_tables[" + std::to_string(i) + "]";
    package_table t = read_table(top.at(tables[i], where));
    if (!m.process(t.process, t.image))
      bad(m.path, where + ".process",
          "pid " + std::to_string(t.process) + " image " + std::to_string(t.image) +
              " is not among processes[]");
    for (std::size_t k = 0; k < m.package_tables.size(); ++k)
      if (m.package_tables[k].process == t.process && m.package_tables[k].image == t.image &&
          m.package_tables[k].package == t.package)
        bad(m.path, where,
            "a second table of " + t.package + " in pid " + std::to_string(t.process) + " image " +
                std::to_string(t.image) + " (package_tables[" + std::to_string(k) + "] is one)");
    m.package_tables.push_back(std::move(t));
  }
}

/// What makes an entry the same binding as another: /1, the package's own name for it (unique,
/// tools/capture/README.md); /2, every member but `count`, which already counts repeats.
std::string binding_key(const json &entry, int schema) {
  if (schema == 1)
    return entry["raw_name"].get<std::string>();
  json key = entry;
  key.erase("count");
  return key.dump(-1, ' ', false, json::error_handler_t::replace);
}

void read_package(const reader &top, captured_map &m) {
  const reader package = top.at(top.object("package"), "package");
  m.kind = package.text("kind");
  const bool known =
      m.schema == 1 ? (m.kind == "cuda.bindings" || m.kind == "numba") : m.kind == "process";
  if (!known)
    bad(m.path, "package.kind",
        std::string("expected ") +
            (m.schema == 1 ? "\"cuda.bindings\" or \"numba\"" : "\"process\"") + ", not \"" +
            m.kind + "\"");
  m.name = package.nullable_text("name").value_or("");
  m.version = package.nullable_text("version").value_or("");
}

} // namespace

const map_process *captured_map::process(long pid, int image) const noexcept {
  for (const auto &p : processes)
    if (p.pid == pid && p.image == image)
      return &p;
  return nullptr;
}

captured_map read_captured_map(const std::string &path) {
  json j;
  try {
    j = read_json_file(
        path); // a regular file, bounded: a FIFO never blocks, deep JSON never crashes
  } catch (const bad_input_error &e) {
    throw map_error(e.what());
  }
  if (!j.is_object())
    throw map_error(path + ": not a JSON object");
  const reader top{path, j, ""};
  captured_map m;
  m.path = path;
  const std::string schema = top.text("schema");
  if (schema == "cuparity.binding_map/2")
    m.schema = 2;
  else if (schema != "cuparity.binding_map/1")
    bad(path, "schema", "expected \"cuparity.binding_map/1\" or \"cuparity.binding_map/2\"");
  read_package(top, m);
  for (const auto &[k, v] : top.object("environment").items())
    m.environment[k] = top.at(j["environment"], "environment").nullable_text(k.c_str());
  m.status = top.text("status");
  const bool status_known =
      m.schema == 1 ? (m.status == "ok" || m.status == "import_failed" || m.status == "load_failed")
                    : (m.status == "ok" || m.status == "no_driver");
  if (!status_known)
    bad(path, "status",
        std::string("expected ") +
            (m.schema == 1 ? "ok, import_failed or load_failed" : "ok or no_driver") + ", not \"" +
            m.status + "\"");
  m.error = top.text("error");
  if (m.schema == 2)
    read_process_tree(top, m);
  const json &entries = top.array("entries");
  std::map<std::string, std::size_t> seen; // binding -> its first entry
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "entries[" + std::to_string(i) + "]";
    m.entries.push_back(read_entry(top.at(entries[i], where), m.schema));
    const captured_entry &e = m.entries.back();
    // A doubled entry would be judged, counted and run twice: the map was edited or merged.
    if (const auto [it, fresh] = seen.try_emplace(binding_key(entries[i], m.schema), i); !fresh)
      bad(path, where,
          (m.schema == 1 ? "raw_name \"" + e.raw_name + "\" again"
                         : std::string("the same binding again")) +
              " (entries[" + std::to_string(it->second) + "] is the same)");
    if (m.schema == 2 && !m.process(e.process, e.image))
      bad(path, where + ".process",
          "pid " + std::to_string(e.process) + " image " + std::to_string(e.image) +
              " is not among processes[]");
  }
  read_package_tables(top, m);
  return m;
}

} // namespace cuparity
