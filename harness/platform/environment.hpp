// Child-process environments: the inherited one with variables set or removed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// Changes to an environment: a value sets the variable, std::nullopt removes it (the same shape
/// as a matrix cell's variables, so a cell can be passed as it is).
using environment_changes = std::map<std::string, std::optional<std::string>>;

/// The current process's environment as a map.
[[nodiscard]] std::map<std::string, std::string> current_environment();

/// The current process's environment with `changes` applied.
[[nodiscard]] std::map<std::string, std::string>
environment_with(const environment_changes &changes);

/// The changes that put a child process in one matrix cell: every variable of `controlled` (the
/// matrix's) removed, so that none leaks in from the parent's environment; then those of `values`
/// that have a value (a cell's: the unset ones stay removed); then CUDA_VISIBLE_DEVICES = `gpu`
/// unless `gpu` is empty.
[[nodiscard]] environment_changes cell_changes(const std::vector<std::string> &controlled,
                                               const environment_changes &values,
                                               const std::string &gpu);

} // namespace cuparity
