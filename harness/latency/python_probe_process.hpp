// The Python probe process of a cell: whether it runs, its command line and its environment.
#pragma once

#include "harness/latency/latency_phase.hpp"
#include "harness/platform/subprocess.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// Whether the phase starts `cuparity probe` in each cell: no probe selection, or one that names a
/// C++ probe (a selection of py.* probes alone runs only the Python process).
[[nodiscard]] bool runs_native_probes(const latency_settings &l);

/// Whether the phase starts the Python probe process in each cell: `python = true` with no probe
/// selection, or a selection that names a py.* probe.
[[nodiscard]] bool runs_python_probes(const latency_settings &l);

/// The arguments of one kind of probe process: its time per probe (each --probe-time of its own
/// probes) and its probe globs; the Python process also gets each --require.
[[nodiscard]] std::vector<std::string>
probe_process_args(const latency_settings &l, const latency_run_options &o, bool python);

/// A cell's Python probe process, or why it cannot start (the cell's latency error).
struct python_probe_start {
  process_spec spec;
  std::string error; ///< "" when `spec` can be started
};

/// The cell's Python probe process: the interpreter (looked up on the process's PATH unless it is
/// a path) running cuparity_pyprobe.py from python/ beside the executable, with `args`, in the
/// cell's environment (options' python_environment, else the cell's variables) plus [latency]
/// python_environment, whose PYTHONPATH goes after the cell's (its packages folder stays first).
[[nodiscard]] python_probe_start python_probe_spec(const matrix &m, const cell &c,
                                                   const latency_run_options &o,
                                                   const std::vector<std::string> &args);

} // namespace cuparity
