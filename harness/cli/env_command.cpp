// `cuparity env`: the effective configuration, driver, devices, binding map and audit.
#include "harness/cli/commands.hpp"
#include "harness/config/config_json.hpp"
#include "harness/driver/binding_audit.hpp"
#include "harness/driver/device_facts.hpp"
#include "harness/driver/driver_json.hpp"
#include "harness/driver/driver_release.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/session/session.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct env_options {
  bool json = false;
  bool bindings = false;
  bool audit = false;
};

void print_text(const effective_config &c, const driver_facts &f, const driver_release &release,
                const std::vector<binding> *map, const audit_report *audit) {
  auto &o = std::cout;
  if (c.simulated)
    o << "*** SIMULATED DRIVER: results describe cuparity's CPU stand-in, not a GPU ***\n";
  o << "binding:        " << c.binding;
  if (c.fallback)
    o << " (fallback from nvidia: " << c.fallback_reason << ")";
  o << "\nstream 0:       " << (c.per_thread_default_stream ? "per-thread" : "legacy")
    << "\ndriver:         " << c.driver_path << "\ndriver version: "
    << (f.driver_version
            ? version_text(f.driver_version) + " (" + std::to_string(f.driver_version) + ")"
            : std::string("unknown"))
    << "\ndriver release: "
    << (release.text.empty() ? std::string("unknown") : release.text + " (" + release.source + ")")
    << "\ninclude path:   " << c.requested.include_path
    << "\nnvidia backend: " << c.requested.nvidia_backend_path << "\n";
  if (!c.requested.variables.empty()) {
    o << "variables:\n";
    for (const auto &[k, v] : c.requested.variables)
      o << "  " << k << "=" << v << "\n";
  }
  if (!f.init_error.empty())
    o << "driver error:   " << f.init_error << "\n";
  o << "devices:        " << f.devices.size() << "\n";
  for (const auto &d : f.devices)
    o << "  [" << d.ordinal << "] " << d.name << ", sm_" << d.cc_major << d.cc_minor << ", "
      << (d.total_memory >> 20) << " MiB, " << d.uuid << "\n";
  o << "warnings:       " << c.warnings.size() << "\n";
  for (const auto &w : c.warnings)
    o << "  warning: " << w << "\n";
  if (map) {
    o << "binding map (" << map->size() << " entries):\n";
    for (const auto &b : *map) {
      o << "  " << b.entry << " [" << b.abi_version << "] -> ";
      if (b.missing)
        o << "MISSING: " << b.missing_reason << "\n";
      else
        o << b.symbol << (b.exported.empty() || b.exported == b.symbol ? "" : " = " + b.exported)
          << " @ " << address_text(b.address) << "\n";
    }
  }
  if (audit) {
    if (!audit->supported)
      o << "audit: not supported: " << audit->not_supported_reason << "\n";
    else {
      o << "audit against cuGetProcAddress_v2(" << audit->flag << "): " << audit->rows.size()
        << " entries, " << audit->mismatches << " mismatches\n";
      for (const auto &r : audit->rows)
        if (!r.match)
          o << "  MISMATCH " << mismatch_text(r) << ": " << address_text(r.bound) << " vs "
            << address_text(r.expected) << "\n";
    }
  }
}

int run_env(const env_options &opt) {
  settings s;
  try {
    s = read_settings(process_environment(), executable_dir());
  } catch (const config_error &e) {
    std::cerr << "cuparity env: " << e.what() << "\n";
    return exit_code::bad_input;
  }
  std::unique_ptr<session> sess;
  try {
    sess = session::open(s);
  } catch (const config_error &e) { // a CUPARITY_BINDING_MAP that cannot be used
    std::cerr << "cuparity env: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const std::exception &e) {
    std::cerr << "cuparity env: " << e.what() << "\n";
    return exit_code::environment;
  }
  driver &d = sess->drv();
  driver_facts facts = query_driver_facts(d);
  // What the runner records as provenance: the driver check is this command (--json).
  const driver_release release = query_driver_release(sess->library(), sess->config().simulated);
  std::vector<binding> map;
  audit_report audit;
  if (opt.audit)
    audit = audit_bindings(d); // resolves every entry
  else if (opt.bindings)
    d.resolve_all();
  if (opt.bindings || opt.audit)
    map = d.binding_map();

  if (opt.json) {
    nlohmann::json j{{"schema", "cuparity.env/1"},
                     {"config", to_json(sess->config())},
                     {"driver", to_json(facts)},
                     {"driver_release", release.text},
                     {"driver_release_source", release.source}};
    if (opt.bindings || opt.audit)
      j["binding_map"] = to_json(map);
    if (opt.audit)
      j["audit"] = to_json(audit);
    // Belt and braces: driver text is made valid where it is read (driver_text.hpp).
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_text(sess->config(), facts, release, opt.bindings ? &map : nullptr,
               opt.audit ? &audit : nullptr);
  }
  if (!facts.init_error.empty())
    return exit_code::environment;
  if (opt.audit && audit.supported && audit.mismatches)
    return exit_code::failures;
  return exit_code::ok;
}

} // namespace

void add_env_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<env_options>();
  auto *cmd = app.add_subcommand("env", "Print the effective configuration this environment "
                                        "selects: binding, fallback, PTDS, driver, devices, "
                                        "warnings");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->add_flag("--bindings", opt->bindings, "Resolve every entry and print the binding map");
  cmd->add_flag("--audit", opt->audit,
                "Check every bound entry against the driver's cuGetProcAddress_v2 answer "
                "(exit 1 on a mismatch)");
  cmd->callback([opt, &run] { run = [opt] { return run_env(*opt); }; });
}

} // namespace cuparity::cli
