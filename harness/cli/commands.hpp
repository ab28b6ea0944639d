// Registration of the CLI's subcommands (one function per command file).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace cuparity::cli {

/// What a parsed subcommand runs once global options are applied; returns the exit code.
using action = std::function<int()>;

/// Each adds its subcommand to `app`; when it is the one parsed, its callback sets `run`.
void add_env_command(CLI::App &app, action &run);
void add_cell_command(CLI::App &app, action &run);
void add_helper_command(CLI::App &app, action &run);
void add_list_command(CLI::App &app, action &run);
void add_probe_command(CLI::App &app, action &run);
void add_calibrate_command(CLI::App &app, action &run);
/// `faults`: fault coverage, one run per (exported symbol, fault).
void add_faults_command(CLI::App &app, action &run);
/// `audit --map FILE`: a captured binding map against the driver under test.
void add_audit_command(CLI::App &app, action &run);
/// `capture -- COMMAND`: what a process tree binds, as a binding map.
void add_capture_command(CLI::App &app, action &run);
/// `api [NAME...]`: the whole driver API table (harness/driver/driver_api.hpp).
void add_api_command(CLI::App &app, action &run);
/// `compare A B`: run against run, from two summaries.
void add_compare_command(CLI::App &app, action &run);
/// `run MATRIX`; `argv` is recorded as provenance.
void add_run_command(CLI::App &app, action &run, const std::vector<std::string> &argv);
/// `merge MATRIX DIRS...`: one summary from shards; `argv` is recorded as provenance.
void add_merge_command(CLI::App &app, action &run, const std::vector<std::string> &argv);
/// `export RUN --format bencher|pyperf`: a run's figures for a dashboard.
void add_export_command(CLI::App &app, action &run);
/// `markdown RUN`: a finished run's step summary, from its summary.json.
void add_markdown_command(CLI::App &app, action &run);
/// `ctest MATRIX -o DIR`: a CTest suite, one test per cell.
void add_ctest_command(CLI::App &app, action &run);

} // namespace cuparity::cli
