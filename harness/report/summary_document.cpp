// summary.json found in a run directory, parsed once and checked by summary_reader.
#include "harness/report/summary_document.hpp"

#include "harness/io/gzip_input.hpp"
#include "harness/io/input_file.hpp"
#include "harness/report/summary_reader.hpp"

#include <filesystem>

namespace cuparity {

summary_document read_summary_document(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw summary_input_error(path, "", "no such file or directory");
  summary_document doc{path, nullptr};
  if (fs::is_directory(path, ec)) {
    doc.source = stored_run_file(path, "summary.json");
    if (!fs::exists(doc.source, ec))
      throw summary_input_error(path, "",
                                "no summary.json (nor summary.json.gz) in this run directory (a "
                                "run without one: `cuparity merge MATRIX DIR -o DIR` writes it "
                                "from results.jsonl)");
  }
  try {
    doc.summary = read_json_file(doc.source);
  } catch (const bad_input_error &e) { // what() names the file already: "<file>: <problem>"
    const std::string what = e.what();
    throw summary_input_error(
        doc.source, "",
        what.rfind(doc.source + ": ", 0) == 0 ? what.substr(doc.source.size() + 2) : what);
  }
  (void)recorded_run_from_json(doc.summary, doc.source); // the same checks as compare's
  return doc;
}

} // namespace cuparity
