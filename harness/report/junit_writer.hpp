// junit.xml: the run as JUnit test suites, for CI systems that read nothing else.
#pragma once

#include "harness/report/output_writer.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// The JUnit document: a testsuite per started cell (env and effective config as properties), a
/// testcase per case; a suite "equivalence" with a failing testcase per divergence, and a suite
/// "run" with one per problem no case testcase carries.
[[nodiscard]] std::string junit_xml(const matrix &m, const std::vector<nlohmann::json> &records,
                                    const comparison &c);

/// Writes junit_xml to a file.
class junit_writer : public output_writer {
public:
  explicit junit_writer(std::string path) : m_path(std::move(path)) {}
  void write(const run_outputs &run) override;

private:
  std::string m_path;
};

} // namespace cuparity
