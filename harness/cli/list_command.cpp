// `cuparity list`: every case with its suite and description.
#include "harness/cli/commands.hpp"
#include "harness/config/shipped_matrices.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/probes/probe_registry.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/run/package_env.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace cuparity::cli {
namespace {

struct list_options {
  std::string matrix;
  std::vector<std::string> cases;
  bool json = false;
  bool matrices = false;
};

std::string exe_dir() {
  return std::filesystem::path(self_executable()).parent_path().string();
}

bool known_glob(const std::string &g) {
  for (const auto &c : case_registry::instance().all())
    if (case_matches(c.id, g))
      return true;
  return false;
}

/// Each distinct packages value as the cache has it now: listing installs nothing.
std::vector<package_environment> located_packages(const matrix &m) {
  std::vector<package_environment> out;
  if (!m.packages)
    return out;
  std::set<std::string> seen;
  for (const auto &c : m.cells)
    if (const auto it = c.env.find(m.packages->axis); it != c.env.end() && it->second)
      if (seen.insert(*it->second).second)
        out.push_back(locate_package_environment(*m.packages, *it->second));
  return out;
}

nlohmann::json packages_json(const matrix &m, const std::vector<package_environment> &envs) {
  if (!m.packages)
    return nullptr;
  nlohmann::json environments = nlohmann::json::array();
  for (const auto &e : envs)
    environments.push_back(package_environment_json(e));
  return {{"axis", m.packages->axis},
          {"cache", package_cache_dir(*m.packages)},
          {"environments", environments}};
}

/// "packages ...: name version, ..." per value, or why it is not (yet) there.
void print_packages(const matrix &m, const std::vector<package_environment> &envs) {
  if (!m.packages)
    return;
  std::cout << "packages (axis " << m.packages->axis << ", cache " << package_cache_dir(*m.packages)
            << "):\n";
  for (const auto &e : envs) {
    std::cout << "  '" << e.value << "': ";
    if (!e.error.empty()) {
      std::cout << e.error << "\n";
      continue;
    }
    if (!e.cached) {
      std::cout << "not installed yet (the run installs it with " << e.installer << " into "
                << e.folder << ")\n";
      continue;
    }
    std::string dists;
    for (const auto &[name, version] : e.distributions)
      dists += (dists.empty() ? "" : ", ") + name + " " + version;
    std::cout << (dists.empty() ? "(no distribution)" : dists) << " [" << e.folder << "]\n";
  }
}

/// Each [[suite]] and [[program]] with its command.
void print_suites(const matrix &m) {
  for (const auto &x : m.suites) {
    if (x.program)
      std::cout << "program " << x.name << " in every cell (one case, " << x.name
                << ": its exit status and what it binds):\n   ";
    else
      std::cout << "suite " << x.name << " in every cell (its tests are known once it runs):\n   ";
    for (const auto &arg : x.command)
      std::cout << " " << arg;
    std::cout << "\n";
  }
}

/// Each [[suite]] and [[program]] as list --json gives it.
nlohmann::json suites_json(const matrix &m) {
  nlohmann::json suites = nlohmann::json::array();
  for (const auto &x : m.suites)
    suites.push_back({{"name", x.name},
                      {"kind", x.program ? "program" : "suite"},
                      {"command", x.command},
                      {"timeout_s", x.timeout_s}});
  return suites;
}

/// The matrix as list --json gives it: cells, selected cases, suites and programs, packages.
void print_matrix_json(const matrix &m, const std::vector<const case_def *> &selected,
                       const std::vector<package_environment> &packages) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto &c : m.cells) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto &[k, v] : c.env)
      env[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    cells.push_back(
        {{"id", c.id}, {"label", c.label}, {"env", env}, {"expectations", c.expectations.size()}});
  }
  nlohmann::json cases = nlohmann::json::array();
  for (auto *c : selected)
    cases.push_back(c->id);
  std::cout << nlohmann::json{{"matrix", m.name},
                              {"cells", cells},
                              {"cases", cases},
                              {"suites", suites_json(m)},
                              {"packages", packages_json(m, packages)}}
                   .dump(2)
            << "\n";
}

/// "    expect binding=nvidia ... [file:line:column]": one [[expect]] rule as a cell has it.
void print_expectation(const expectation &x) {
  std::cout << "    expect";
  if (x.binding)
    std::cout << " binding=" << *x.binding;
  if (x.stream0)
    std::cout << " stream0=" << *x.stream0;
  if (x.fallback)
    std::cout << " fallback=" << (*x.fallback ? "true" : "false");
  for (const auto &w : x.warnings)
    std::cout << " warning~'" << w << "'";
  if (x.warning_count)
    std::cout << " warnings=" << *x.warning_count;
  for (const auto &a : x.allow)
    std::cout << " allow(" << a.cases.front() << (a.cases.size() > 1 ? ",..." : "") << ")";
  std::cout << "  [" << x.where.text() << "]\n";
}

/// Each cell with its environment and the expectations that apply to it.
void print_cells(const matrix &m) {
  std::cout << m.name << ": " << m.description << "\n" << m.cells.size() << " cells:\n";
  for (const auto &c : m.cells) {
    std::cout << "  " << c.id << "\n   ";
    for (const auto &[k, v] : c.env)
      std::cout << " " << k << "=" << (v ? *v : "<unset>");
    std::cout << "\n";
    for (const auto *x : c.expectations)
      print_expectation(*x);
  }
}

/// The cells of a matrix with their environment and expectations, its packages, suites and
/// programs, then its cases.
int list_matrix(const list_options &opt) {
  const auto known_probe = [](const std::string &g) {
    return probe_registry::instance().matches_any(g);
  };
  const std::optional<matrix> m = load_matrix_reporting(
      resolve_matrix_argument(opt.matrix, exe_dir()), known_glob, known_probe, std::cerr, "list");
  if (!m)
    return exit_code::bad_input;
  // A suite matrix runs its suites, whose tests exist only once they run: no built-in case.
  auto selected = m->suites.empty() ? case_registry::instance().select(m->cases, m->exclude_cases)
                                    : std::vector<const case_def *>{};
  const std::vector<package_environment> packages = located_packages(*m);
  if (opt.json) {
    print_matrix_json(*m, selected, packages);
    return exit_code::ok;
  }
  print_cells(*m);
  print_packages(*m, packages);
  print_suites(*m);
  if (!m->suites.empty())
    return exit_code::ok;
  std::cout << selected.size() << " cases per cell, " << selected.size() * m->cells.size()
            << " results in all\n";
  for (auto *c : selected)
    std::cout << "  " << c->id << "\n";
  return exit_code::ok;
}

/// The shipped matrices (`--matrices`): name, description and file, for an installed cuparity
/// that has no clone to read them from.
int list_shipped_matrices(const list_options &opt) {
  const auto shipped = shipped_matrices(exe_dir());
  if (shipped.empty()) {
    std::cerr
        << "cuparity list: no shipped matrices beside this executable (looked in "
        << (std::filesystem::path(exe_dir()) / "../share/cuparity/matrices").lexically_normal()
        << ")\n";
    return exit_code::environment;
  }
  nlohmann::json out = nlohmann::json::array();
  const auto known_probe = [](const std::string &g) {
    return probe_registry::instance().matches_any(g);
  };
  for (const auto &s : shipped) {
    std::string description;
    try {
      description = load_matrix(s.path, known_glob, known_probe).description;
    } catch (const matrix_error &e) {
      description = std::string("(cannot be read: ") + e.what() + ")";
    }
    if (opt.json)
      out.push_back({{"name", s.name}, {"path", s.path}, {"description", description}});
    else
      std::cout << s.name << "  " << description << "\n    " << s.path << "\n";
  }
  if (opt.json)
    std::cout << out.dump(2) << "\n";
  return exit_code::ok;
}

int run_list(const list_options &opt) {
  if (opt.matrices)
    return list_shipped_matrices(opt);
  if (!opt.matrix.empty())
    return list_matrix(opt);
  auto selected = case_registry::instance().select(opt.cases);
  if (opt.json) {
    nlohmann::json out = nlohmann::json::array();
    for (auto *c : selected)
      out.push_back({{"id", c->id},
                     {"suite", c->suite()},
                     {"description", c->description},
                     {"exclusive", c->exclusive},
                     {"timeout_s", c->timeout.count() / 1000.0},
                     {"requirements", c->needs.describe()}});
    std::cout << out.dump(2) << "\n";
    return exit_code::ok;
  }
  std::map<std::string, int> per_suite;
  for (auto *c : selected) {
    std::cout << c->id << "  " << c->description << (c->exclusive ? " [exclusive]" : "") << "\n";
    // What the case declares it needs: a cell lacking one reports it not_supported, naming it.
    std::string needs;
    for (const auto &n : c->needs.describe())
      needs += (needs.empty() ? "" : ", ") + n;
    if (!needs.empty())
      std::cout << "    needs " << needs << "\n";
    ++per_suite[c->suite()];
  }
  std::cout << "\n" << selected.size() << " cases:";
  for (const auto &s : case_registry::instance().suites())
    std::cout << " " << s << " " << per_suite[s];
  std::cout << "\n";
  return exit_code::ok;
}

} // namespace

void add_list_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<list_options>();
  auto *cmd = app.add_subcommand("list", "List the cases, or a matrix's cells and cases");
  cmd->add_option("matrix", opt->matrix,
                  "A matrix file: list its cells (with their environment) "
                  "and cases");
  cmd->add_option("--case", opt->cases, "Case id, glob or suite (repeatable)");
  cmd->add_flag("--matrices", opt->matrices,
                "List the shipped matrices (each can be named without its path)")
      ->excludes(cmd->get_option("matrix"));
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->callback([opt, &run] { run = [opt] { return run_list(*opt); }; });
}

} // namespace cuparity::cli
