// The list of writers a run uses, and writing through all of them.
#include "harness/report/output_writer.hpp"

#include "harness/io/output_file.hpp"
#include "harness/report/console_writer.hpp"
#include "harness/report/junit_writer.hpp"
#include "harness/report/summary_json_writer.hpp"

namespace cuparity {

output_writer_list standard_writers(const std::string &out_dir, std::ostream &console) {
  output_writer_list out;
  out.push_back(std::make_unique<summary_json_writer>(out_dir + "/summary.json"));
  out.push_back(std::make_unique<junit_writer>(out_dir + "/junit.xml"));
  out.push_back(std::make_unique<console_writer>(console));
  return out;
}

void file_writer::write(const run_outputs &run) {
  // Whole or not at all, and never over a link, device or FIFO (harness/io/output_file.hpp).
  write_output_file(m_path, text(run));
}

void write_all(const output_writer_list &writers, const run_outputs &run) {
  for (const auto &w : writers)
    w->write(run);
}

} // namespace cuparity
