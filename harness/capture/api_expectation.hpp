// What the whole driver API table (harness/driver/driver_api.hpp) says one binding should be.
#pragma once

#include "harness/driver/driver_api.hpp"

#include <string>
#include <string_view>

namespace cuparity {

/// The symbol cuGetProcAddress should hand out for `f` asked at `version`: the newest ABI at that
/// version, or its per-thread variant where `per_thread` asked it and the variant's version is at
/// most `version`. "" where it should hand out nothing (the function is newer than `version`, or
/// the per-thread variant is: driver-facts.md#per-thread-version).
[[nodiscard]] std::string expected_symbol(const api_function &f, long long version,
                                          bool per_thread);

/// `f`'s newest ABI that a driver of `driver_version` has (0: unknown, the table's newest); the
/// table's newest where the function is newer than the driver.
[[nodiscard]] const api_abi &newest_abi(const api_function &f, long long driver_version) noexcept;

/// The version to ask for newest_abi() in a stream-0 mode: the per-thread variant of an ABI may be
/// newer than the ABI itself (cuMemcpyHtoD_v2 3020, cuMemcpyHtoD_v2_ptds 7000).
[[nodiscard]] int newest_query_version(const api_function &f, bool per_thread,
                                       long long driver_version) noexcept;

/// Whether the stream-0 mode of `s` can be wrong: it is a per-thread variant, or its ABI has one.
[[nodiscard]] bool mode_matters(const api_symbol &s) noexcept;

/// Why a request for `f` at `version` got no pointer from a driver of `driver_version` (0:
/// unknown), in words: asked below its first ABI, a function (or the ABI due at that version)
/// newer than the driver, asked above the driver's own version, or none of these.
[[nodiscard]] std::string null_entry_reason(const api_function &f, long long version,
                                            long long driver_version);

/// A CUDA_VERSION in words: 13000 -> "CUDA 13.0".
[[nodiscard]] std::string cuda_version_text(int version);

/// How the parameter types `bound` (comma-separated, as driver_api.hpp keeps them) differ from
/// `newest`, in words ("`unsigned int` where the newest has `size_t`: 32-bit sizes"); "" if alike.
[[nodiscard]] std::string parameter_difference(std::string_view bound, std::string_view newest);

} // namespace cuparity
