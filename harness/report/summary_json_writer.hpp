// summary.json: the machine-readable outcome of a run (docs/formats.md).
#pragma once

#include "harness/report/output_writer.hpp"

#include <string>

namespace cuparity {

/// Writes make_summary's document to a file, indented by two, with a final newline.
class summary_json_writer : public output_writer {
public:
  explicit summary_json_writer(std::string path) : m_path(std::move(path)) {}
  void write(const run_outputs &run) override;

private:
  std::string m_path;
};

} // namespace cuparity
