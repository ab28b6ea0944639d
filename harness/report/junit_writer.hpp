// junit.xml: the run as JUnit test suites, for CI systems that read nothing else.
#pragma once

#include "harness/report/output_writer.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// The JUnit document: a testsuite per started cell (env and effective config as properties, and
/// cuparity.* ones: binding, stream0, driver, packages; `provenance` gives the packages installed
/// for each cell, when the run has a packages axis), a testcase per case; a suite "equivalence"
/// with a failing testcase per divergence, and a suite "run" with one per problem no case testcase
/// carries.
[[nodiscard]] std::string junit_xml(const matrix &m, const std::vector<nlohmann::json> &records,
                                    const comparison &c,
                                    const nlohmann::json &provenance = nullptr);

/// Writes junit_xml to a file.
class junit_writer : public file_writer {
public:
  using file_writer::file_writer;

protected:
  [[nodiscard]] std::string text(const run_outputs &run) const override;
};

} // namespace cuparity
