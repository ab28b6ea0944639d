// Kernel images by name (PTX and a cubin per architecture, a fatbin), registered from any object.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

enum class kernel_format { ptx, cubin, fatbin };

/// One image of one kernel source, as nvcc built it.
struct kernel_image {
  std::string kernel; ///< the source's name: "basic" for basic.cu
  kernel_format format = kernel_format::cubin;
  int sm = 0;                          ///< cubin: its SM (90); PTX: its compute_XX; fatbin: 0
  std::span<const unsigned char> data; ///< PTX is NUL-terminated just past the span
  /// "basic.cubin (sm_90)": for messages.
  [[nodiscard]] std::string describe() const;
};

/// Every registered image. Objects register theirs from static initialisers
/// (CUPARITY_KERNEL_IMAGE), so registration never throws: a second image for the same
/// (kernel, format, SM) is kept as a problem that every lookup then reports.
class kernel_registry {
public:
  static kernel_registry &instance();
  void add(kernel_image image) noexcept;
  [[nodiscard]] const std::vector<kernel_image> &all() const noexcept { return m_images; }
  /// The image named "<kernel>.<ptx|cubin|fatbin>" that a device of SM `device_sm` (90 for
  /// compute capability 9.0) runs: the cubin for its SM, else for an older minor of its major
  /// (machine code runs on later minors of one major); the PTX of the newest architecture no newer
  /// than the device (it is JIT-compiled forwards, never backwards); the kernel's fatbin. Throws
  /// std::invalid_argument naming the image and the device when there is none.
  [[nodiscard]] const kernel_image &find(std::string_view name, int device_sm) const;

private:
  std::vector<kernel_image> m_images;
  std::string m_problem; ///< the first duplicate registration, if any
};

/// Registers one image at static initialisation (see CUPARITY_KERNEL_IMAGE).
struct kernel_image_registrar {
  kernel_image_registrar(const char *kernel, kernel_format format, int sm,
                         const unsigned char *data, std::size_t size) noexcept;
};

#define CUPARITY_KERNEL_IMAGE_CAT2(a, b) a##b
#define CUPARITY_KERNEL_IMAGE_CAT(a, b) CUPARITY_KERNEL_IMAGE_CAT2(a, b)
/// One registration line per image, in any object linked into the executable (an OBJECT library:
/// a static library would let the linker drop it), e.g.
///   CUPARITY_KERNEL_IMAGE("saxpy", cubin, 90, saxpy_sm90, sizeof saxpy_sm90 - 1);
/// cmake/kernels.cmake's cuparity_add_kernels writes these lines for nvcc's outputs.
#define CUPARITY_KERNEL_IMAGE(kernel, format, sm, data, size)                                      \
  static const ::cuparity::kernel_image_registrar CUPARITY_KERNEL_IMAGE_CAT(                       \
      cuparity_kernel_image_, __COUNTER__) {                                                       \
    kernel, ::cuparity::kernel_format::format, sm, data, size                                      \
  }

[[nodiscard]] const char *to_string(kernel_format f) noexcept;

} // namespace cuparity
