// summary.json: the machine-readable outcome of a run (docs/formats.md).
#pragma once

#include "harness/report/output_writer.hpp"

#include <string>

namespace cuparity {

/// Writes make_summary's document to a file, indented by two, with a final newline.
class summary_json_writer : public file_writer {
public:
  using file_writer::file_writer;

protected:
  [[nodiscard]] std::string text(const run_outputs &run) const override;
};

} // namespace cuparity
