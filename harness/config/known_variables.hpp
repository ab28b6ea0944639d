// The variables something in a run is known to read, and the known name closest to another one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

/// Who reads a known variable. `configuration`: cuparity's own configuration (binding_variables()),
/// whose effect every cell records; the others act where the records may not show it (a shim's
/// delay moves a latency, CUDA_CACHE_PATH moves nothing a case observes).
enum class variable_reader { configuration, cuda_driver, fault_shim, simulated_driver };

/// The reader of `name`, or std::nullopt for a variable nothing in a run is known to read.
[[nodiscard]] std::optional<variable_reader> known_reader(std::string_view name);

/// "the CUDA driver", "the fault shim", ...: for messages.
[[nodiscard]] std::string_view reader_text(variable_reader r);

/// The known variable nearest to `name` by edit distance (ties: the first in the catalogue);
/// what a misspelt NUMBA_CUDA_USE_NVIDA_BINDING was meant to be.
[[nodiscard]] std::string closest_known_variable(std::string_view name);

/// "The known variable closest to it is X" where X is within a third of `name`'s length in edits
/// (a plausible misspelling), else "No known variable is spelt like it": for messages.
[[nodiscard]] std::string closest_known_variable_text(std::string_view name);

/// The name of `among` nearest to `name` by edit distance ("" when `among` is empty).
[[nodiscard]] std::string closest_name(std::string_view name,
                                       const std::vector<std::string> &among);

} // namespace cuparity
