// The NVIDIA kernel module's release ("580.159.04"), from NVML or /proc/driver/nvidia/version.
#pragma once

#include <string>
#include <string_view>

namespace cuparity {

/// A driver's release text and where it was read; both "" when it could not be read.
struct driver_release {
  std::string text;   ///< e.g. "580.159.04"
  std::string source; ///< "nvml", "proc", "simulated" (harness/driver), or ""
};

/// Whether `text` looks like a release: starts with a digit, holds a '.', and has only letters,
/// digits and ". _ - + ~" (at most 64 characters). What is not is not recorded.
[[nodiscard]] bool is_release_text(std::string_view text) noexcept;

/// The release in the text of /proc/driver/nvidia/version: the token after "Kernel Module" on the
/// first line that has it (after "for <arch>" in the open module's "Open Kernel Module for x86_64
/// 580.159.04"); "" when there is none or it is not a release.
[[nodiscard]] std::string release_from_proc_text(std::string_view text);

/// release_from_proc_text of the file at `path` (source "proc"), or {"", ""} when it cannot be
/// read or holds no release.
[[nodiscard]] driver_release
read_proc_driver_release(const std::string &path = "/proc/driver/nvidia/version");

/// nvmlSystemGetDriverVersion (source "nvml"), else read_proc_driver_release(), else {"", ""}.
/// Never throws.
[[nodiscard]] driver_release read_kernel_driver_release();

} // namespace cuparity
