// A child that shares the terminal: stdin, stdout and stderr pass through, as for a shell command.
#pragma once

#include "harness/platform/subprocess.hpp"

#include <map>
#include <string>
#include <vector>

namespace cuparity {

/// Runs argv (argv[0] looked up in PATH when it has no '/') with exactly `env`, on this process's
/// own descriptors, and waits for it. While it runs, SIGINT and SIGQUIT are ignored here, as
/// system(3) does (a Ctrl-C is the child's to handle), and SIGTERM and SIGHUP are passed on to the
/// child: either way the caller still gets to record how it ended. Throws std::system_error when
/// it cannot start (the message names argv[0]).
[[nodiscard]] process_result run_attached(const std::vector<std::string> &argv,
                                          const std::map<std::string, std::string> &env);

/// The exit status a shell would report for `r`: the exit code, or 128 + the signal.
[[nodiscard]] int shell_status(const process_result &r) noexcept;

} // namespace cuparity
