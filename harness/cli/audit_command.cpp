// `cuparity audit --map FILE`: a binding map captured from a package, against the driver under
// test.
#include "harness/capture/api_expectation.hpp"
#include "harness/capture/map_audit.hpp"
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/terminal_text.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity::cli {
namespace {

struct audit_options {
  std::string map, json;
};

nlohmann::json report_json(const captured_map &m, const map_audit_report &r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto &f : r.findings)
    findings.push_back({{"function", f.function},
                        {"raw_name", f.raw_name},
                        {"kind", to_string(f.kind)},
                        {"captured", f.captured},
                        {"driver", f.driver},
                        {"internal", f.internal},
                        {"expected", f.expected},
                        {"because", f.because},
                        {"message", f.message},
                        {"process", f.process},
                        {"image", f.image},
                        {"source", f.source}});
  nlohmann::json counts = nlohmann::json::object();
  for (const auto &[k, n] : r.counts)
    counts[to_string(k)] = n;
  nlohmann::json unchecked = nlohmann::json::array();
  for (const auto &f : r.findings)
    if (f.kind == finding_kind::unchecked)
      unchecked.push_back({{"function", f.function},
                           {"captured", f.captured},
                           {"process", f.process},
                           {"image", f.image},
                           {"reason", f.because}});
  return {{"schema", "cuparity.map_audit/1"},
          {"map", m.path},
          {"package", {{"kind", m.kind}, {"name", m.name}, {"version", m.version}}},
          {"map_schema", m.schema},
          {"driver", r.driver_path},
          {"expected_stream0", r.ptds.per_thread ? "per-thread" : "legacy"},
          {"because", r.ptds.why},
          {"audited", r.audited},
          {"not_audited", r.not_audited},
          {"failed", r.failed},
          {"notes", r.notes},
          {"counts", counts},
          {"headers_version", r.headers_version},
          {"unknown", r.unknown},
          {"unchecked", unchecked},
          {"inferred", r.inferred},
          {"findings", findings}};
}

/// One line for the entries of a kind that are not judged, every name given (--json has each
/// entry): the names the headers do not declare, the bindings whose mode nothing tells.
void print_all(std::ostream &o, const std::string &what, const std::vector<std::string> &names) {
  if (names.empty())
    return;
  o << "  " << terminal_text(what) << ":";
  for (std::size_t i = 0; i < names.size(); ++i)
    o << (i ? ", " : " ") << (names[i].empty() ? "\"\"" : terminal_text(names[i]));
  o << "\n";
}

void print_header(std::ostream &o, const captured_map &m, const map_audit_report &r) {
  const auto t = [](std::string_view s) { return terminal_text(s); };
  if (m.schema == 1) {
    o << "audit of " << t(m.path) << ": " << t(m.kind) << " " << t(m.version) << " against "
      << t(r.driver_path) << "\n  " << t(r.ptds.why) << ": the package should bind "
      << (r.ptds.per_thread ? "per-thread" : "legacy") << " symbols\n";
    return;
  }
  o << "audit of " << t(m.path) << ": " << m.processes.size() << " process"
    << (m.processes.size() == 1 ? "" : "es") << " of " << t(m.name) << " against "
    << t(r.driver_path) << "\n  each entry against its caller's package's variable, else its "
    << "request's flags, else what its binder bound\n";
}

/// Prints the audit; every text that comes from the map or the driver is escaped (a map's version
/// holding ESC, BEL or a newline could otherwise forge a "PASSED" line on the console).
void print_report(std::ostream &o, const captured_map &m, const map_audit_report &r) {
  print_header(o, m, r);
  for (const auto &n : r.notes)
    o << "  note: " << terminal_text(n) << "\n";
  if (!r.audited) {
    o << "NOT AUDITED: " << terminal_text(r.not_audited) << "\n";
    return;
  }
  o << "  judged against the driver API of the " << cuda_version_text(r.headers_version)
    << " headers cuparity was built with (" << r.headers_version << ")\n";
  for (const auto &line : r.inferred)
    o << "  inferred: " << terminal_text(line) << "\n";
  std::map<std::string, std::vector<std::string>> unchecked; // reason -> bindings
  for (const auto &f : r.findings)
    if (f.kind == finding_kind::unchecked)
      unchecked[f.because].push_back((f.process ? "pid " + std::to_string(f.process) + " " : "") +
                                     f.captured);
    else if (f.kind != finding_kind::same && f.kind != finding_kind::unknown)
      o << "  " << (f.kind == finding_kind::per_thread_wrong ? "MISMATCH" : to_string(f.kind))
        << " " << terminal_text(f.message) << "\n";
  print_all(o,
            "unknown: " + std::to_string(r.unknown.size()) + " name" +
                (r.unknown.size() == 1 ? "" : "s") + " the " +
                cuda_version_text(r.headers_version) + " headers do not declare, not checked",
            r.unknown);
  for (const auto &[why, names] : unchecked)
    print_all(o, "unchecked: " + std::to_string(names.size()) + " (" + why + ")", names);
  o << "  " << r.findings.size() << " entries:";
  for (const auto &[k, n] : r.counts)
    o << " " << n << " " << to_string(k) << ";";
  o << (r.failed ? " FAILED" : " PASSED") << "\n";
}

/// A message of several lines (the driver's load error lists each file tried) as `env` prints it:
/// each line escaped on its own, the line breaks kept.
std::string terminal_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += terminal_text(text.substr(start, end - start));
    if (end < text.size())
      out += '\n';
    start = end + 1;
  }
  return out;
}

int run_audit(const audit_options &opt) {
  captured_map m;
  try {
    if (!opt.json.empty()) {
      // Refused before anything is read or written: the map and any existing --json stay intact.
      check_output_file(opt.json, "--json");
      refuse_same_file(opt.json, opt.map, "--json");
    }
    m = read_captured_map(opt.map);
  } catch (const map_error &e) {
    std::cerr << "cuparity audit: --map " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity audit: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  }
  std::shared_ptr<driver_library> lib;
  try {
    const settings s = read_settings(process_environment(), executable_dir());
    lib = driver_library::open(s.driver_path);
  } catch (const config_error &e) { // a variable that cannot be used: as `env` says it
    std::cerr << "cuparity audit: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  } catch (const driver_load_error &e) {
    std::cerr << "cuparity audit: " << terminal_lines(e.what()) << "\n";
    return exit_code::environment;
  }
  const map_audit_report r = audit_captured_map(m, *lib);
  print_report(std::cout, m, r);
  if (!opt.json.empty()) {
    try {
      // A map's name or members need not be UTF-8: replaced, never a throw mid-write.
      write_output_file(
          opt.json,
          report_json(m, r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
          "--json");
    } catch (const bad_input_error &e) {
      std::cerr << "cuparity audit: " << terminal_text(e.what()) << "\n";
      return exit_code::bad_input;
    }
  }
  if (r.failed) // a failure found before the entries (a refused value accepted) stays one
    return exit_code::failures;
  return r.audited ? exit_code::ok : exit_code::not_audited; // nothing checked is never a pass
}

} // namespace

void add_audit_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<audit_options>();
  auto *cmd = app.add_subcommand(
      "audit", "Check a binding map (cuparity capture, tools/capture) against the driver");
  cmd->add_option("--map", opt->map, "The captured map (cuparity.binding_map/1 or /2)")->required();
  cmd->add_option("--json", opt->json, "Also write the audit as JSON to this file");
  cmd->callback([opt, &run] { run = [opt] { return run_audit(*opt); }; });
}

} // namespace cuparity::cli
