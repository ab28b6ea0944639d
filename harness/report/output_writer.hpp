// The output writer interface: everything a run's outputs are made of, and the writers a run uses.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/verdict/compare.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace cuparity {

/// What the run knows beyond its records: provenance, clock times, the latency phase.
struct run_facts {
  nlohmann::json provenance;
  std::string started, finished;
  double functional_wall_s = 0;
  std::string shard;      ///< "K/N" or ""
  nlohmann::json latency; ///< latency comparison (null when the phase did not run)
  bool latency_failed = false;
};

/// Everything an output is made from; the writers read records, never the driver or the suite.
struct run_outputs {
  const matrix &m;
  const std::vector<nlohmann::json> &records;
  const comparison &verdict;
  const run_facts &facts;
};

/// One output of a run (a file or a stream). Every writer sees the same run_outputs, so the
/// outputs cannot disagree about the verdict.
class output_writer {
public:
  virtual ~output_writer() = default;
  virtual void write(const run_outputs &run) = 0;
};

/// A writer whose output is one file: the subclass makes the text, this writes it.
class file_writer : public output_writer {
public:
  explicit file_writer(std::string path) : m_path(std::move(path)) {}
  /// The text is made before the file is opened, so a failure leaves the old file as it was.
  void write(const run_outputs &run) final;

protected:
  /// The file's whole content.
  [[nodiscard]] virtual std::string text(const run_outputs &run) const = 0;

private:
  std::string m_path;
};

using output_writer_list = std::vector<std::unique_ptr<output_writer>>;

/// summary.json and junit.xml in `out_dir`, then the console table on `console`.
[[nodiscard]] output_writer_list standard_writers(const std::string &out_dir,
                                                  std::ostream &console);

/// Each writer in turn, in the list's order.
void write_all(const output_writer_list &writers, const run_outputs &run);

} // namespace cuparity
