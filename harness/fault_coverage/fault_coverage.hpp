// Fault coverage: which driver faults the suites see, tried one (exported symbol, fault) at a time.
//
// A conformance suite is only as strong as the faults it notices. `cuparity faults` runs a matrix
// once per trial: one fault (a generic error, CUDA_ERROR_NOT_SUPPORTED, a corrupted result, a
// per-thread symbol acting as its legacy twin) injected into one exported symbol, on both
// resolution paths or on one (the simulated driver's CUPARITY_SIM_FAULTS, or the fault shim's
// CUPARITY_SHIM_FAULTS in front of a real driver). A trial is caught when its run fails with a
// problem or a divergence; the cases that failed are named. Symbols the backends never bind are
// listed, as are faults no case sees (docs/fault-coverage.md).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *faults_schema = "cuparity.faults/1";

/// The fault run cannot go on here: a file in --out cannot be written (a full disk), or the
/// control run could not run at all. `cuparity faults` exits 3 with what() (bad input, exit 2,
/// is bad_input_error: harness/io/input_file.hpp).
class faults_environment_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Every symbol the simulated driver and the fault shim export (harness/driver), in their order.
[[nodiscard]] const std::vector<std::string> &exported_symbols();

/// One fault in one symbol: `<symbol>:<fault>[@<path>]` in the fault grammar.
struct fault_trial {
  std::string symbol; ///< the exported symbol, e.g. cuMemcpyDtoH_v2
  std::string entry;  ///< the cuparity entry it is bound for, e.g. cuMemcpyDtoH
  std::string fault;  ///< error=999, error=801, corrupt, legacy
  std::string path;   ///< any, dlsym, proc

  [[nodiscard]] std::string spec() const;
  [[nodiscard]] std::string slug() const; ///< a folder name: symbol_fault_path
  /// The class the totals count it in: "error 999 both paths", "corrupt both paths", ...
  [[nodiscard]] std::string fault_class() const;
};

struct trial_result {
  fault_trial trial;
  bool ran = false;    ///< the run wrote a summary
  bool caught = false; ///< the run failed with a problem or a divergence
  int exit_code = -1;
  std::string verdict;
  std::vector<std::string> by; ///< the cases (or cell errors) that caught it
  std::string note;            ///< why it did not run, or what else is worth saying
};

struct fault_coverage_options {
  std::string matrix;               ///< the cells every trial runs (both backends, both modes)
  std::string out;                  ///< trials under out/trials/<slug>/, faults.json, faults.md
  std::string driver = "sim";       ///< "sim", or the fault shim's path
  std::string target;               ///< the shim's CUPARITY_SHIM_TARGET ("" = its default)
  std::vector<std::string> symbols; ///< fnmatch globs; empty: every bound symbol
  std::vector<std::string> kinds;   ///< error, not_supported, corrupt, legacy; empty: all
  std::vector<std::string> paths;   ///< any, dlsym, proc; empty: all three
  int jobs = 2;                     ///< trials at once
  int cell_jobs = 4;                ///< -j of each trial's run
  bool resume = false;              ///< keep trials that already have a summary
  std::string devices;              ///< the simulated driver's device count ("" = its default)
};

/// Which cases declare an entry: the trial of a symbol runs only those (a case calls only what it
/// declares), or every case when none does (calls made at a cell's start).
using cases_of_entry = std::function<std::vector<std::string>(const std::string &entry)>;

struct fault_coverage {
  std::string driver;
  std::string matrix;
  std::vector<std::string> bound;   ///< exported symbols some cell bound, sorted
  std::vector<std::string> unbound; ///< exported symbols no cell bound
  std::vector<trial_result> trials;
  std::vector<std::string> not_applicable; ///< "spec: why" for faults the library refused
};

/// Runs the control (no fault; it must be equivalent) and every trial. `progress` gets one line
/// per finished trial. Throws bad_input_error naming the cause for bad input: a --symbol glob that
/// matches no exported symbol (before the control) or none the control bound, a selection that
/// leaves no trial, a driver that takes no faults, a control that refused its input or is not
/// equivalent. Throws faults_environment_error (naming the file) when a file in `out` cannot be
/// written or the control could not run; std::runtime_error when the driver cannot be opened.
[[nodiscard]] fault_coverage
run_fault_coverage(const fault_coverage_options &opt, const cases_of_entry &cases,
                   const std::function<void(const std::string &)> &progress);

/// cuparity.faults/1: the symbols, every trial with what caught it, totals per fault class.
[[nodiscard]] nlohmann::json fault_coverage_json(const fault_coverage &c);
/// The same as Markdown: totals, then per symbol a row of its trials, then what no case saw.
void print_fault_table(std::ostream &out, const fault_coverage &c);

} // namespace cuparity
