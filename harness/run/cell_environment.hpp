// The environments of the processes a run starts: cells and the driver check.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <map>
#include <string>

namespace cuparity {

/// A cell process's environment: the inherited one without any matrix-controlled variable, then
/// the cell's values, CUDA_VISIBLE_DEVICES = `gpu` (unless empty) and the GPU lock directory. The
/// packages axis is no variable: the folder installed for the cell's value comes first on
/// PYTHONPATH (installed now unless done before; package_error when it cannot be).
[[nodiscard]] std::map<std::string, std::string> cell_environment(const matrix &m, const cell &c,
                                                                  const std::string &gpu,
                                                                  const std::string &lock_dir);

/// A suite's own variables ([[suite]] environment) for cell `c`: a PYTHONPATH it sets, which
/// replaces the cell's, keeps the cell's packages folder first.
[[nodiscard]] std::map<std::string, std::string>
suite_environment_of(const matrix &m, const cell &c,
                     const std::map<std::string, std::string> &suite_env);

/// The driver check's environment: the inherited one without any matrix-controlled variable,
/// except the driver under test, the first cell's when the matrix chooses it.
[[nodiscard]] std::map<std::string, std::string> driver_check_environment(const matrix &m);

} // namespace cuparity
