// Lookup of embedded kernel images by name.
#include "kernel_images.hpp"

#include <stdexcept>

namespace cuparity {

const kernel_image &find_kernel_image(std::string_view name) {
  for (const auto &k : kernel_images())
    if (k.name == name)
      return k;
  throw std::out_of_range("no embedded kernel image named '" + std::string(name) + "'");
}

} // namespace cuparity
