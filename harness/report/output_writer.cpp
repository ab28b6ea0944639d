// The list of writers a run uses, and writing through all of them.
#include "harness/report/output_writer.hpp"

#include "harness/report/console_writer.hpp"
#include "harness/report/junit_writer.hpp"
#include "harness/report/summary_json_writer.hpp"

#include <fstream>
#include <stdexcept>

namespace cuparity {

output_writer_list standard_writers(const std::string &out_dir, std::ostream &console) {
  output_writer_list out;
  out.push_back(std::make_unique<summary_json_writer>(out_dir + "/summary.json"));
  out.push_back(std::make_unique<junit_writer>(out_dir + "/junit.xml"));
  out.push_back(std::make_unique<console_writer>(console));
  return out;
}

void file_writer::write(const run_outputs &run) {
  const std::string content = text(run);
  std::ofstream out(m_path);
  if (!out)
    throw std::runtime_error("cannot write " + m_path);
  out << content;
}

void write_all(const output_writer_list &writers, const run_outputs &run) {
  for (const auto &w : writers)
    w->write(run);
}

} // namespace cuparity
