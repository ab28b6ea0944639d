// `cuparity api [--json] [NAME...]`: the whole driver API table, as the header sets declare it.
#include "harness/cli/commands.hpp"
#include "harness/driver/device_facts.hpp"
#include "harness/driver/driver_api.hpp"
#include "harness/protocol/exit_codes.hpp"

#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity::cli {
namespace {

struct api_options {
  bool json = false;
  std::vector<std::string> names; ///< base names or exported symbols; none: every function
};

std::string header_versions_text() {
  std::string out;
  for (int version : api_header_versions())
    out += (out.empty() ? "" : ", ") + version_text(version) + " (" + std::to_string(version) + ")";
  return out;
}

nlohmann::json function_json(const api_function &f) {
  nlohmann::json abis = nlohmann::json::array();
  for (const api_abi &abi : f.abis) {
    nlohmann::json per_thread = nullptr;
    if (!abi.per_thread_symbol.empty())
      per_thread = {{"version", abi.per_thread_version}, {"symbol", abi.per_thread_symbol}};
    abis.push_back({{"version", abi.version},
                    {"symbol", abi.symbol},
                    {"parameters", abi.parameters},
                    {"per_thread", per_thread}});
  }
  return {{"name", f.name}, {"declared_in", f.declared_in}, {"abis", abis}};
}

void print_function(std::ostream &o, const api_function &f) {
  o << f.name << " (declared in the headers of " << version_text(f.declared_in) << ")\n";
  for (const api_abi &abi : f.abis) {
    o << "  " << std::left << std::setw(6) << abi.version << " " << std::setw(40) << abi.symbol
      << " (" << abi.parameters << ")\n";
    if (!abi.per_thread_symbol.empty())
      o << "  " << std::setw(6) << abi.per_thread_version << " " << std::setw(40)
        << abi.per_thread_symbol << " (per-thread default stream variant of " << abi.symbol
        << ")\n";
  }
}

int run_api(const api_options &opt) {
  // The functions asked for, in the order asked; a name may also be an exported symbol.
  std::vector<const api_function *> chosen;
  bool unknown = false;
  for (const std::string &name : opt.names) {
    const api_function *f = find_api_function(name);
    if (f == nullptr)
      if (const auto symbol = find_api_symbol(name))
        f = symbol->function;
    if (f == nullptr) {
      std::cerr << "cuparity api: " << name << ": no driver function or exported symbol of that "
                << "name in the headers of " << header_versions_text() << "\n";
      unknown = true;
      continue;
    }
    chosen.push_back(f);
  }
  if (opt.names.empty())
    for (const api_function &f : all_api_functions())
      chosen.push_back(&f);
  if (opt.json) {
    nlohmann::json functions = nlohmann::json::array();
    for (const api_function *f : chosen)
      functions.push_back(function_json(*f));
    const nlohmann::json j{{"schema", "cuparity.api/1"},
                           {"header_versions", api_header_versions()},
                           {"functions", functions}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "driver API: " << chosen.size() << " of " << all_api_functions().size()
              << " functions, from the headers of " << header_versions_text() << "\n";
    for (const api_function *f : chosen)
      print_function(std::cout, *f);
  }
  return unknown ? exit_code::bad_input : exit_code::ok;
}

} // namespace

void add_api_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<api_options>();
  auto *cmd = app.add_subcommand(
      "api",
      "The whole driver API cuparity knows: each function, its ABIs and per-thread variants");
  cmd->add_option("name", opt->names,
                  "Functions to show, by base name (cuMemAlloc) or exported symbol "
                  "(cuMemAlloc_v2); none: every function");
  cmd->add_flag("--json", opt->json, "Print JSON (schema cuparity.api/1)");
  cmd->callback([opt, &run] { run = [opt] { return run_api(*opt); }; });
}

} // namespace cuparity::cli
