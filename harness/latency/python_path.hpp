// What the Python call path costs above the C++ one: each py.* probe against its C++ twin.
#pragma once

#include "harness/latency/latency_samples.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// The summary's `latency.python_path` rows (docs/latency.md, "What the Python path costs"): for
/// every cell and every `py.<op>` probe whose C++ probe `<op>` ran in the same run, per binding,
/// the Python figure, the C++ figure and their difference (what the binding's Python layer adds),
/// each with a bootstrap interval at `confidence` over the rounds. The series are matched by the
/// binding each process really used (`py_backend`, `cpp_backend`: cell -> "internal" | "nvidia"),
/// not by name, so a Python process that fell back to ctypes is set against the C++ internal
/// path. The library series (`cupy:<cell>`, `cuda_core:<cell>`) get rows of their own, path the
/// library's name, set against the C++ raw pointer of the binding the library calls through (CuPy:
/// internal, cuda.core: nvidia). Empty when the run has no such pair.
[[nodiscard]] nlohmann::json python_path_rows(const probe_samples &samples,
                                              const std::map<std::string, std::string> &py_backend,
                                              const std::map<std::string, std::string> &cpp_backend,
                                              double confidence);

} // namespace cuparity
