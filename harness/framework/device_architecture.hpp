// The compute capability of the device this process runs on, read once at the process's start.
#pragma once

#include "harness/driver/device_facts.hpp"
#include "harness/framework/kernel_registry.hpp"

#include <string_view>

namespace cuparity {

struct compute_capability {
  int major = 0, minor = 0;
  [[nodiscard]] bool known() const noexcept { return major > 0; }
  /// 90 for 9.0: the number in sm_90 and compute_90.
  [[nodiscard]] int sm() const noexcept { return major * 10 + minor; }
};

/// Notes device 0's compute capability from the facts every process start reads (cell, probe and
/// helper processes run on device 0, which CUDA_VISIBLE_DEVICES chose). Unknown when the facts
/// hold no device (cuInit failed, or a query was refused).
void note_device_architecture(const driver_facts &facts);

/// What note_device_architecture noted (unknown before it).
[[nodiscard]] compute_capability device_architecture() noexcept;

/// The registered image named `name` ("basic.cubin") for this process's device. Throws
/// std::invalid_argument naming the image when the device's architecture is unknown or no
/// registered image runs on it.
[[nodiscard]] const kernel_image &kernel_image_for_device(std::string_view name);

} // namespace cuparity
