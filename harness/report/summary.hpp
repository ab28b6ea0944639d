// The run's outputs: summary.json (versioned, with provenance), junit.xml and the console table.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/report/output_writer.hpp"
#include "harness/verdict/compare.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *summary_schema = "cuparity.summary/1";

/// The exit code docs/verdicts.md defines for a comparison: 0, 1 or 3.
[[nodiscard]] int verdict_exit_code(const comparison &c, const run_facts &facts);

/// The verdict's name: "environment", "incomplete", "failed" or "equivalent" (in that order of
/// precedence); summary.json's "verdict", and in capitals the console's last word.
[[nodiscard]] const char *verdict_name(const comparison &c, const run_facts &facts);

/// summary.json's content (docs/formats.md); summary_json_writer writes it.
[[nodiscard]] nlohmann::json make_summary(const matrix &m,
                                          const std::vector<nlohmann::json> &records,
                                          const comparison &c, const run_facts &facts);

/// JUnit XML: one testsuite per cell (env, effective config and the cell's binding, stream0,
/// driver and packages as properties), one testcase per case; an extra suite "equivalence" with
/// one failing testcase per divergence. Writes through junit_writer; of `facts` it reads the
/// provenance (the packages installed per cell).
void write_junit(const std::string &path, const matrix &m,
                 const std::vector<nlohmann::json> &records, const comparison &c,
                 const run_facts &facts = {});

/// The console table: a row per cell, then every problem and divergence, then the verdict.
/// Writes through console_writer.
void print_console(std::ostream &out, const matrix &m, const std::vector<nlohmann::json> &records,
                   const comparison &c, const run_facts &facts);

} // namespace cuparity
