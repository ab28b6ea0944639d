// The run's outputs: summary.json (versioned, with provenance), junit.xml and the console table.
#pragma once

#include "harness/verdict/compare.hpp"
#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *summary_schema = "cuparity.summary/1";

struct run_facts {
  nlohmann::json provenance;
  std::string started, finished;
  double functional_wall_s = 0;
  std::string shard;      ///< "K/N" or ""
  nlohmann::json latency; ///< latency comparison (null when the phase did not run)
  bool latency_failed = false;
};

/// The exit code of a comparison (docs/formats.md): 0, 1 or 3.
[[nodiscard]] int verdict_exit_code(const comparison &c, const run_facts &facts);

[[nodiscard]] nlohmann::json make_summary(const matrix &m,
                                          const std::vector<nlohmann::json> &records,
                                          const comparison &c, const run_facts &facts);

/// JUnit XML: one testsuite per cell (env and effective config as properties), one testcase per
/// case; an extra suite "equivalence" with one failing testcase per divergence.
void write_junit(const std::string &path, const matrix &m,
                 const std::vector<nlohmann::json> &records, const comparison &c);

/// The console table: a row per cell, then every problem and divergence, then the verdict.
void print_console(std::ostream &out, const matrix &m, const std::vector<nlohmann::json> &records,
                   const comparison &c, const run_facts &facts);

} // namespace cuparity
