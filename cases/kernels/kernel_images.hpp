// The project's kernels as built by nvcc (PTX, cubin, fatbin), embedded in the executable.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

struct kernel_image {
  std::string name;                    ///< "<source>.<ptx|cubin|fatbin>", e.g. "basic.cubin"
  std::span<const unsigned char> data; ///< size excludes the trailing NUL the table adds
};

[[nodiscard]] const std::vector<kernel_image> &kernel_images();

/// The image named `name`; throws std::out_of_range naming it when there is none.
[[nodiscard]] const kernel_image &find_kernel_image(std::string_view name);

} // namespace cuparity
