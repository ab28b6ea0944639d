// Installing the packages axis' values: one cached folder per value, by uv or pip --target.
#include "harness/run/package_env.hpp"

#include "harness/io/sha256.hpp"
#include "harness/matrix/package_keys.hpp"
#include "harness/matrix/variables.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/subprocess.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The most an install may take (an index may be slow; a wheel folder takes seconds).
constexpr auto install_timeout = std::chrono::minutes(30);
constexpr const char *marker_name = "cuparity-environment.json";

/// `name` as posix_spawn needs it: a path, or the first executable of that name on PATH.
std::string find_program(const std::string &name) {
  if (name.find('/') != std::string::npos)
    return access(name.c_str(), X_OK) == 0 ? fs::absolute(name).string() : std::string();
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = dirs.substr(at, end - at);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
      return candidate;
    at = end + 1;
  }
  return {};
}

/// The installer's environment: the run's, without what would send pip elsewhere than --target.
std::map<std::string, std::string> installer_environment() {
  return environment_with({{"PIP_USER", std::nullopt},
                           {"PIP_TARGET", std::nullopt},
                           {"PIP_PREFIX", std::nullopt},
                           {"PIP_REQUIRE_VIRTUALENV", std::nullopt}});
}

/// The last `n` lines of the installer's output that hold anything, joined by " | ".
std::string last_lines(const std::string &text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      lines.push_back(line.substr(0, line.find_last_not_of(" \t\r") + 1));
  if (lines.empty())
    return "(no output)";
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

/// The interpreter's sys.version, asked once per interpreter; "" when it cannot run.
std::string python_version(const std::string &python) {
  static std::mutex lock;
  static std::map<std::string, std::string> known;
  const std::lock_guard<std::mutex> hold(lock);
  if (auto it = known.find(python); it != known.end())
    return it->second;
  std::string version;
  try {
    const process_result r = run_process({{python, "-c", "import sys; print(sys.version)"},
                                          installer_environment(),
                                          std::chrono::seconds(60)});
    if (r.exited && r.exit_code == 0)
      version = r.out.substr(0, r.out.find_last_not_of("\n") + 1);
  } catch (const std::exception &) {
  }
  return known[python] = version;
}

/// Each wheel folder's files, by name, with size and mtime: a wheel rebuilt under its old name
/// makes another environment.
std::string wheels_identity(const std::vector<std::string> &folders) {
  std::string out;
  for (const auto &f : folders) {
    out += "folder " + f + "\n";
    std::error_code ec;
    std::vector<std::string> lines;
    for (const auto &e : fs::directory_iterator(f, ec)) {
      std::error_code fe;
      if (!e.is_regular_file(fe))
        continue;
      const auto size = e.file_size(fe);
      const auto mtime = e.last_write_time(fe).time_since_epoch().count();
      lines.push_back(e.path().filename().string() + " " + std::to_string(size) + " " +
                      std::to_string(mtime));
    }
    std::sort(lines.begin(), lines.end());
    for (const auto &l : lines)
      out += l + "\n";
  }
  return out;
}

/// The installer the settings choose, as (name, program); the program is "" when missing.
std::pair<std::string, std::string> choose_installer(const package_settings &s,
                                                     const std::string &python) {
  if (s.installer != "pip") {
    const std::string uv = find_program("uv");
    if (!uv.empty() || s.installer == "uv")
      return {"uv", uv};
  }
  return {"pip", python};
}

std::string single_quoted(const std::string &value) {
  return "'" + value + "'";
}

std::vector<std::string> install_command(const package_settings &s, const package_environment &e,
                                         const std::string &program, const std::string &python,
                                         const std::string &target) {
  std::vector<std::string> argv;
  if (e.installer == "uv")
    argv = {program, "pip", "install", "--target", target, "--python", python};
  else
    argv = {python,      "-m", "pip", "install", "--target", target, "--disable-pip-version-check",
            "--no-input"};
  if (s.no_deps)
    argv.push_back("--no-deps");
  if (!s.find_links.empty() && !s.index_url)
    argv.push_back("--no-index"); // wheel folders alone: offline, never a default index
  for (const auto &f : s.find_links) {
    argv.push_back("--find-links");
    argv.push_back(f);
  }
  if (s.index_url) {
    argv.push_back("--index-url");
    argv.push_back(*s.index_url);
  }
  argv.insert(argv.end(), e.requirements.begin(), e.requirements.end());
  return argv;
}

/// "Name: x" / "Version: y" of a dist-info's METADATA, else its folder's name-version.
std::pair<std::string, std::string> distribution_of(const fs::path &dist_info) {
  std::string name, version;
  std::ifstream in(dist_info / "METADATA");
  for (std::string line; std::getline(in, line) && !line.empty() && line != "\r";) {
    if (line.back() == '\r')
      line.pop_back();
    if (name.empty() && line.rfind("Name:", 0) == 0)
      name = line.substr(line.find_first_not_of(' ', 5));
    else if (version.empty() && line.rfind("Version:", 0) == 0)
      version = line.substr(line.find_first_not_of(' ', 8));
  }
  if (name.empty() || version.empty()) {
    const std::string stem = dist_info.stem().string(); // "name-version"
    const std::size_t dash = stem.rfind('-');
    name = stem.substr(0, dash);
    version = dash == std::string::npos ? "?" : stem.substr(dash + 1);
  }
  return {name, version};
}

std::vector<std::pair<std::string, std::string>> read_distributions(const std::string &folder) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".dist-info")
      out.push_back(distribution_of(e.path()));
  std::sort(out.begin(), out.end());
  return out;
}

/// An exclusive flock on <cache>/<key>.lock for as long as it lives.
class cache_lock {
public:
  explicit cache_lock(const std::string &path) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0)
      throw package_error("cannot open the lock file " + path);
    while (::flock(m_fd, LOCK_EX) != 0)
      if (errno != EINTR)
        throw package_error("cannot lock " + path);
  }
  ~cache_lock() { ::close(m_fd); } // closing releases the lock
  cache_lock(const cache_lock &) = delete;
  cache_lock &operator=(const cache_lock &) = delete;

private:
  int m_fd = -1;
};

std::string write_marker(const package_environment &e, const std::string &folder) {
  std::ofstream out(folder + "/" + marker_name);
  out << json{{"value", e.value}, {"requirements", e.requirements}, {"installer", e.installer}}
             .dump(2)
      << "\n";
  return out ? std::string() : "cannot write " + folder + "/" + marker_name;
}

/// Runs the installer into a fresh temporary folder and renames it into place; e.error on failure.
void install(const package_settings &s, package_environment &e, const std::string &program,
             const std::string &python) {
  const fs::path cache = fs::path(e.folder).parent_path();
  const std::string tmp = (cache / (".tmp-" + e.key + "-" + std::to_string(getpid()))).string();
  std::error_code ec;
  fs::remove_all(tmp, ec);
  const auto t0 = std::chrono::steady_clock::now();
  process_result r;
  try {
    r = run_process(
        {install_command(s, e, program, python, tmp), installer_environment(), install_timeout});
  } catch (const std::exception &x) {
    r.err = x.what();
  }
  e.install_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ofstream(e.log) << r.out << r.err;
  const std::string how = r.timed_out ? "was killed after 30 minutes"
                          : r.exited  ? "exited " + std::to_string(r.exit_code)
                          : r.signal  ? "was killed by signal " + std::to_string(r.signal)
                                      : "could not start";
  std::string why;
  if (!r.exited || r.exit_code != 0)
    why = e.installer + " " + how + ": " + last_lines(r.out + r.err, 3);
  else if (!fs::is_directory(tmp, ec))
    why = e.installer + " installed nothing into " + tmp;
  else if (auto bad = write_marker(e, tmp); !bad.empty())
    why = bad;
  else if (fs::rename(tmp, e.folder, ec); ec && !fs::is_directory(e.folder))
    why = "cannot rename " + tmp + " to " + e.folder + ": " + ec.message();
  // A folder already there (a cache whose file system ignores flock) is complete: it was
  // renamed in whole. This install's copy goes.
  fs::remove_all(tmp, ec);
  if (!why.empty()) {
    e.error = "packages " + single_quoted(e.value) + " cannot be installed into the cache " +
              cache.string() + ": " + why + " (log: " + e.log + ")";
    return;
  }
  e.installed_now = true;
  e.cached = true;
}

/// Temporary folders a killed install left; only called under the key's lock.
void remove_leftovers(const fs::path &cache, const std::string &key) {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(cache, ec))
    if (e.path().filename().string().rfind(".tmp-" + key + "-", 0) == 0)
      fs::remove_all(e.path(), ec);
}

/// The memo of prepared values: (settings, value) -> environment.
struct prepared_memo {
  std::mutex lock;
  std::map<std::string, package_environment> by_key;
};

prepared_memo &memo() {
  static prepared_memo m;
  return m;
}

std::string settings_text(const package_settings &s) {
  json j{{"find_links", s.find_links},
         {"index_url", s.index_url ? json(*s.index_url) : json(nullptr)},
         {"installer", s.installer},
         {"python", s.python},
         {"cache", package_cache_dir(s)},
         {"no_deps", s.no_deps}};
  return j.dump();
}

const package_environment &prepared(const package_settings &s, const std::string &value,
                                    std::ostream &log) {
  prepared_memo &m = memo();
  const std::string id = settings_text(s) + "\n" + value;
  {
    const std::lock_guard<std::mutex> hold(m.lock);
    if (auto it = m.by_key.find(id); it != m.by_key.end())
      return it->second;
  }
  // Installed outside the memo's lock: two values install at once; the same value is serialized
  // by its lock file, and the second finds it cached.
  package_environment e = prepare_package_environment(s, value, log);
  const std::lock_guard<std::mutex> hold(m.lock);
  return m.by_key.try_emplace(id, std::move(e)).first->second;
}

std::optional<std::string> value_of(const matrix &m, const cell &c) {
  if (!m.packages)
    return std::nullopt;
  const auto it = c.env.find(m.packages->axis);
  return it == c.env.end() ? std::nullopt : it->second;
}

} // namespace

std::string package_cache_dir(const package_settings &s) {
  if (s.cache)
    return *s.cache;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::string(xdg) + "/cuparity/packages";
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/cuparity/packages";
}

package_environment locate_package_environment(const package_settings &s,
                                               const std::string &value) {
  package_environment e;
  e.value = value;
  e.requirements = matrix_detail::package_requirements(value);
  const std::string cache = package_cache_dir(s);
  const std::string python = find_program(s.python);
  const std::string version = python.empty() ? "" : python_version(python);
  const auto [installer, program] = choose_installer(s, python);
  e.installer = installer;
  const std::string identity = "cuparity packages 1\n" + settings_text(s) + "\n" + value + "\n" +
                               installer + "\n" + version + "\n" + wheels_identity(s.find_links);
  e.key = sha256_hex(identity).substr(0, 16);
  e.folder = cache + "/" + e.key;
  e.log = cache + "/" + e.key + ".log";
  std::error_code ec;
  e.cached = fs::is_directory(e.folder, ec);
  if (e.cached)
    e.distributions = read_distributions(e.folder);
  else if (version.empty())
    e.error = "packages " + single_quoted(value) + " cannot be installed: the interpreter " +
              single_quoted(s.python) + " " + (python.empty() ? "is not on PATH" : "does not run") +
              " (cache: " + cache + ")";
  else if (program.empty())
    e.error = "packages " + single_quoted(value) + " cannot be installed: [packages] installer = " +
              "\"uv\", and no uv is on PATH (cache: " + cache + ")";
  return e;
}

package_environment prepare_package_environment(const package_settings &s, const std::string &value,
                                                std::ostream &log) {
  package_environment e = locate_package_environment(s, value);
  if (e.cached || !e.error.empty())
    return e;
  const fs::path cache = fs::path(e.folder).parent_path();
  std::error_code ec;
  fs::create_directories(cache, ec);
  try {
    const cache_lock hold((cache / (e.key + ".lock")).string());
    if (!fs::is_directory(e.folder, ec)) { // another process may have installed it meanwhile
      remove_leftovers(cache, e.key);
      const std::string python = find_program(s.python);
      install(s, e, choose_installer(s, python).second, python);
    }
  } catch (const package_error &x) {
    e.error = "packages " + single_quoted(value) + " cannot be installed: " + x.what();
  }
  if (e.error.empty()) {
    e.cached = true;
    e.distributions = read_distributions(e.folder);
  }
  if (e.installed_now)
    log << "cuparity run: packages " << single_quoted(value) << ": installed by " << e.installer
        << " into " << e.folder << " (" << static_cast<int>(e.install_s * 10) / 10.0 << " s)\n";
  return e;
}

json package_environment_json(const package_environment &e) {
  json dists = json::array();
  for (const auto &[name, version] : e.distributions)
    dists.push_back({{"name", name}, {"version", version}});
  return {{"value", e.value},         {"requirements", e.requirements},
          {"installer", e.installer}, {"key", e.key},
          {"folder", e.folder},       {"reused", e.cached && !e.installed_now},
          {"distributions", dists},   {"error", e.error.empty() ? json(nullptr) : json(e.error)}};
}

namespace {

/// The cell's other variables, as a cell id: what `cuparity compare` pairs two runs' cells by
/// when they differ by their packages value alone.
std::string other_variables(const matrix &m, const cell &c) {
  std::vector<std::string> others;
  for (const auto &v : m.variables)
    if (v != m.packages->axis)
      others.push_back(v);
  return matrix_detail::cell_id(others, c.env);
}

} // namespace

json prepare_package_environments(const matrix &m, const std::vector<const cell *> &cells,
                                  std::ostream &log) {
  if (!m.packages)
    return nullptr;
  json environments = json::array(), by_cell = json::object();
  std::map<std::string, const package_environment *> seen;
  for (const cell *c : cells) {
    const auto value = value_of(m, *c);
    if (!value) { // the site's own packages
      by_cell[c->id] = {
          {"value", nullptr}, {"others", other_variables(m, *c)}, {"distributions", nullptr}};
      continue;
    }
    auto [it, fresh] = seen.try_emplace(*value, nullptr);
    if (fresh) {
      it->second = &prepared(*m.packages, *value, log);
      if (it->second->error.empty() && !it->second->installed_now)
        log << "cuparity run: packages '" << *value << "': reused " << it->second->folder << "\n";
      environments.push_back(package_environment_json(*it->second));
    }
    json dists = json::object();
    for (const auto &[name, version] : it->second->distributions)
      dists[name] = version;
    by_cell[c->id] = {{"value", *value},
                      {"others", other_variables(m, *c)},
                      {"distributions", it->second->error.empty() ? dists : json(nullptr)}};
  }
  return {{"axis", m.packages->axis},
          {"cache", package_cache_dir(*m.packages)},
          {"environments", environments},
          {"cells", by_cell}};
}

std::string package_folder(const matrix &m, const cell &c) {
  const auto value = value_of(m, c);
  if (!value)
    return {};
  std::ostringstream ignored;
  const package_environment &e = prepared(*m.packages, *value, ignored);
  if (!e.error.empty())
    throw package_error(e.error);
  return e.folder;
}

} // namespace cuparity
