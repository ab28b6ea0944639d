// From the audit library's events to binding_map/2: entries keyed and counted, objects named by
// their Python distribution, the driver's version asked from the driver itself.
#include "harness/capture/capture_map.hpp"

#include "harness/capture/python_packages.hpp"
#include "harness/driver/driver_library.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// The variables binding_map/1 recorded, kept in /2 so its readers find them in place.
constexpr const char *k_map_variables[] = {"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM",
                                           "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
                                           "NUMBA_CUDA_DRIVER",
                                           "NUMBA_CUDA_USE_NVIDIA_BINDING",
                                           "CUDA_VISIBLE_DEVICES",
                                           "LD_LIBRARY_PATH"};

json nullable(const std::optional<std::string> &s) {
  return s ? json(*s) : json(nullptr);
}

/// cuDriverGetVersion of the driver at `path`, asked in this process (no cuInit needed).
json driver_version(const std::string &path) {
  try {
    const auto lib = driver_library::open(path);
    using fn = int (*)(int *);
    const auto get = reinterpret_cast<fn>(lib->symbol("cuDriverGetVersion"));
    int v = 0;
    if (get && get(&v) == 0)
      return v;
  } catch (const driver_load_error &) {
  }
  return nullptr;
}

struct entry_key {
  long pid;
  int image;
  std::string source, raw_name, symbol, library, caller;
  long long version;
  std::uint64_t flags;
  int result, status;
  auto operator<=>(const entry_key &) const = default;
};

struct entry_value {
  json entry;
  std::size_t count = 0;
};

/// The calling object's path. The main program has no name of its own in the link map: rtld
/// gives "" to la_symbind and dladdr gives argv[0] as typed ("./t"); both are the process's exe.
std::string caller_of(const captured_process &p, const std::string &caller) {
  const bool main_program =
      caller.empty() || (caller[0] != '/' && !p.argv.empty() && caller == p.argv.front());
  return main_program ? p.exe : caller;
}

json package_of(const std::map<std::string, distribution> &owners, const std::string &path) {
  const auto it = owners.find(path);
  return it == owners.end() ? json(nullptr) : json(it->second.name);
}

void add_binds(const captured_process &p, const std::map<std::string, distribution> &owners,
               std::map<entry_key, entry_value> &entries) {
  for (const auto &b : p.binds) {
    const std::string caller = caller_of(p, b.caller);
    auto &v = entries[{p.pid, p.image, b.via, b.symbol, b.symbol, b.library, caller, 0, 0, 0, 0}];
    if (v.count++ == 0)
      v.entry = {{"function", base_function(b.symbol)},
                 {"raw_name", b.symbol},
                 {"symbol", b.symbol},
                 {"library", b.library},
                 {"source", b.via},
                 {"process", p.pid},
                 {"image", p.image},
                 {"caller", caller},
                 {"caller_package", package_of(owners, caller)},
                 {"request", nullptr}};
  }
}

void add_requests(const captured_process &p, const std::map<std::string, distribution> &owners,
                  std::map<entry_key, entry_value> &entries) {
  for (const auto &r : p.requests) {
    const std::string caller = caller_of(p, r.caller);
    const std::string symbol = r.pointer_symbol.value_or("");
    auto &v = entries[{p.pid, p.image, "proc", r.symbol, symbol, r.pointer_library.value_or(""),
                       caller, r.version, r.flags, r.result, r.status.value_or(-1)}];
    if (v.count++ == 0)
      v.entry = {{"function", base_function(r.symbol)},
                 {"raw_name", r.symbol},
                 {"symbol", r.null_pointer ? json(nullptr) : nullable(r.pointer_symbol)},
                 {"library", r.null_pointer ? json(nullptr) : nullable(r.pointer_library)},
                 {"source", "proc"},
                 {"process", p.pid},
                 {"image", p.image},
                 {"caller", caller},
                 {"caller_package", package_of(owners, caller)},
                 {"request",
                  {{"abi", r.abi},
                   {"version", r.version},
                   {"flags", r.flags},
                   {"result", r.result},
                   {"status", r.status ? json(*r.status) : json(nullptr)}}}};
  }
}

/// The image a forked child was copied from: its parent's last image, if captured.
const captured_process *fork_parent(const std::vector<captured_process> &all,
                                    const captured_process &p) {
  const captured_process *parent = nullptr;
  if (p.forked)
    for (const auto &q : all)
      if (q.pid == p.ppid && (!parent || q.image > parent->image))
        parent = &q;
  return parent;
}

/// The objects a process holds: its own, and for a forked child its parent's before the fork.
std::vector<std::string> objects_of(const std::vector<captured_process> &all,
                                    const captured_process &p) {
  std::vector<std::string> out = p.objects;
  if (const captured_process *parent = fork_parent(all, p))
    out.insert(out.end(), parent->objects.begin(), parent->objects.end());
  return out;
}

std::vector<std::string> drivers_of(const std::vector<captured_process> &all,
                                    const captured_process &p) {
  std::vector<std::string> out = p.drivers;
  if (const captured_process *parent = fork_parent(all, p))
    out.insert(out.end(), parent->drivers.begin(), parent->drivers.end());
  return out;
}

json process_json(const captured_process &p, const std::vector<std::string> &objects,
                  const std::vector<std::string> &drivers,
                  const std::map<std::string, distribution> &owners) {
  std::set<std::string> packages;
  for (const auto &o : objects)
    if (const auto it = owners.find(o); it != owners.end())
      packages.insert(it->second.name);
  return {{"pid", p.pid},
          {"image", p.image},
          {"ppid", p.ppid},
          {"forked", p.forked},
          {"exe", p.exe},
          {"argv", p.argv},
          {"environment", p.environment},
          {"drivers", drivers},
          {"packages", packages},
          {"binds", p.binds.size()},
          {"requests", p.requests.size()},
          {"unreadable_lines", p.unreadable_lines}};
}

json table_json(const package_table_event &t, int image) {
  json functions = json::object();
  for (const auto &[name, p] : t.functions)
    functions[name] = p ? json{{"symbol", nullable(p->symbol)}, {"library", nullable(p->library)}}
                        : json(nullptr);
  return {{"process", t.pid},
          {"image", image},
          {"package", t.package},
          {"version", nullable(t.version)},
          {"module", nullable(t.module)},
          {"file", nullable(t.module_file)},
          {"folder", nullable(t.folder)},
          {"status", t.status},
          {"note", t.why},
          {"functions", functions}};
}

/// The last image of `pid` (-1: none). The hook writes at exit, after the process's last exec.
int last_image(const std::vector<captured_process> &processes, long pid) {
  int image = -1;
  for (const auto &p : processes)
    if (p.pid == pid)
      image = std::max(image, p.image);
  return image;
}

/// The first object of a cuda/bindings folder that asked cuGetProcAddress in `p` ("": none).
std::string bindings_caller(const captured_process &p) {
  for (const auto &r : p.requests)
    if (r.caller.find("/cuda/bindings/") != std::string::npos)
      return r.caller;
  return {};
}

/// Why a process where cuda.bindings bound the driver has no table: never a silent pass.
std::string not_recorded(const capture_facts &facts, const std::string &caller) {
  const std::string what = "cuda.bindings (" + caller + ") bound the driver, but no table of it ";
  if (!facts.python_hook)
    return what + "was recorded: the capture ran with --no-python-hook";
  return what + "was written by the start-up hook: the process ended without running its exit "
                "handlers (os._exit, a signal, an exec), or its Python never read the hook "
                "(python -E, -I or -S, or a command that set PYTHONPATH itself)";
}

/// Whether `name` is cuda.bindings' distribution, as pip compares names (PEP 503: case, and runs of
/// "-", "_", "." alike).
bool is_bindings_distribution(const std::string &name) {
  std::string n;
  for (const char c : name) {
    const bool sep = c == '-' || c == '_' || c == '.';
    if (!sep)
      n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (n.empty() || n.back() != '-')
      n += '-';
  }
  return n == "cuda-bindings" || n == "cuda-python";
}

/// The hook names the package by its module and __version__; where cuda/bindings/__init__.py in
/// the folder on sys.path that holds the package is listed in the RECORD of cuda-bindings or
/// cuda-python, that distribution names it instead, as importlib.metadata would. The hook leaves
/// this to the capture: importing importlib.metadata at exit cost every process that imported
/// cuda.bindings some 20 ms (issue 49, the capture's cost).
package_table_event with_distribution(package_table_event t) {
  constexpr std::string_view package_path = "/cuda/bindings";
  if (!t.folder || !t.folder->ends_with(package_path))
    return t;
  const std::string site = t.folder->substr(0, t.folder->size() - package_path.size());
  const auto owner = distribution_listing(site.empty() ? "/" : site, "cuda/bindings/__init__.py");
  if (!owner || !is_bindings_distribution(owner->name))
    return t;
  t.package = owner->name;
  t.version = owner->version.empty() ? std::nullopt : std::optional(owner->version);
  return t;
}

json package_tables_json(const std::vector<captured_process> &processes, const capture_facts &facts,
                         const std::vector<package_table_event> &tables,
                         const std::map<std::string, distribution> &owners) {
  json out = json::array();
  std::set<std::pair<long, int>> recorded;
  for (const auto &t : tables) {
    const int image = last_image(processes, t.pid);
    if (image < 0)
      continue; // no captured process: the caller names it among the problems
    recorded.insert({t.pid, image});
    out.push_back(table_json(with_distribution(t), image));
  }
  for (const auto &p : processes) {
    const std::string caller = bindings_caller(p);
    if (caller.empty() || recorded.count({p.pid, p.image}))
      continue;
    const auto owner = owners.find(caller);
    package_table_event t;
    t.pid = p.pid;
    t.package = owner != owners.end() ? owner->second.name : "cuda.bindings";
    if (owner != owners.end() && !owner->second.version.empty())
      t.version = owner->second.version;
    t.status = "not_recorded";
    t.why = not_recorded(facts, caller);
    out.push_back(table_json(t, p.image));
  }
  return out;
}

} // namespace

bool is_captured(const std::vector<captured_process> &processes, long pid) noexcept {
  return last_image(processes, pid) >= 0;
}

bool is_per_thread_symbol(std::string_view s) noexcept {
  return s.ends_with("_ptds") || s.ends_with("_ptsz");
}

std::string base_function(std::string_view s) {
  for (bool changed = true; changed;) {
    changed = false;
    for (std::string_view suffix : {"_ptds", "_ptsz"})
      if (s.ends_with(suffix)) {
        s.remove_suffix(suffix.size());
        changed = true;
      }
    const auto v = s.rfind("_v");
    if (v != std::string_view::npos && v + 2 < s.size() &&
        s.substr(v + 2).find_first_not_of("0123456789") == std::string_view::npos) {
      s = s.substr(0, v);
      changed = true;
    }
  }
  return std::string(s);
}

json capture_map_json(const std::vector<captured_process> &processes, const capture_facts &facts,
                      const std::vector<package_table_event> &tables) {
  std::vector<std::string> all_objects;
  for (const auto &p : processes)
    all_objects.insert(all_objects.end(), p.objects.begin(), p.objects.end());
  for (const auto &p : processes)
    for (const auto &b : p.binds)
      all_objects.push_back(b.caller);
  for (const auto &p : processes)
    for (const auto &r : p.requests)
      all_objects.push_back(r.caller);
  const auto owners = owning_distributions(all_objects);

  std::map<entry_key, entry_value> entries;
  json procs = json::array();
  std::map<std::string, std::string> versions; // distribution -> version, every process
  std::string driver;
  for (const auto &p : processes) {
    add_binds(p, owners, entries);
    add_requests(p, owners, entries);
    const auto objects = objects_of(processes, p);
    procs.push_back(process_json(p, objects, drivers_of(processes, p), owners));
    for (const auto &o : objects)
      if (const auto it = owners.find(o); it != owners.end())
        versions[it->second.name] = it->second.version;
    if (driver.empty() && !p.drivers.empty())
      driver = p.drivers.front();
  }
  json list = json::array();
  for (auto &[k, v] : entries) {
    v.entry["count"] = v.count;
    list.push_back(std::move(v.entry));
  }
  json packages = json::array();
  for (const auto &[name, version] : versions)
    packages.push_back({{"name", name}, {"version", version}});
  json environment = json::object();
  for (const char *var : k_map_variables) {
    const auto *top = processes.empty() ? nullptr : &processes.front().environment;
    const auto it = top ? top->find(var) : std::map<std::string, std::string>::const_iterator();
    environment[var] = top && it != top->end() ? json(it->second) : json(nullptr);
  }
  const std::string program =
      facts.command.empty() ? "" : std::filesystem::path(facts.command.front()).filename().string();
  return {{"schema", "cuparity.binding_map/2"},
          {"package", {{"kind", "process"}, {"name", program}, {"version", nullptr}}},
          {"command", facts.command},
          {"exit_status", facts.exit_status},
          {"environment", environment},
          {"driver",
           {{"path", driver.empty() ? json(nullptr) : json(driver)},
            {"version", driver.empty() ? json(nullptr) : driver_version(driver)}}},
          {"status", driver.empty() ? "no_driver" : "ok"},
          {"error", driver.empty() ? "no process of the command loaded the driver" : ""},
          {"captured", facts.captured},
          {"packages", packages},
          {"processes", procs},
          {"problems", facts.problems},
          {"lost", facts.lost},
          {"package_tables", package_tables_json(processes, facts, tables, owners)},
          {"entries", list}};
}

} // namespace cuparity
