// Registration of kernel images and the choice of the image a device runs.
#include "harness/framework/kernel_registry.hpp"

#include <stdexcept>

namespace cuparity {
namespace {

/// "basic.cubin" -> ("basic", cubin); throws naming the image when the suffix is no format.
std::pair<std::string_view, kernel_format> split_kernel_image_name(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  const std::string_view suffix = dot == std::string_view::npos ? "" : name.substr(dot + 1);
  for (kernel_format f : {kernel_format::ptx, kernel_format::cubin, kernel_format::fatbin})
    if (suffix == to_string(f))
      return {name.substr(0, dot), f};
  throw std::invalid_argument("kernel image '" + std::string(name) +
                              "': expected <kernel>.ptx, <kernel>.cubin or <kernel>.fatbin");
}

/// Whether `image` runs on `device_sm`, and how well: higher is better, 0 means not at all.
int kernel_image_fit(const kernel_image &image, int device_sm) {
  switch (image.format) {
  case kernel_format::cubin: // same major, minor no newer than the device's
    return image.sm / 10 == device_sm / 10 && image.sm % 10 <= device_sm % 10 ? image.sm : 0;
  case kernel_format::ptx:
    return image.sm <= device_sm ? image.sm : 0;
  case kernel_format::fatbin:
    return 1;
  }
  return 0;
}

std::string kernel_image_choices(const std::vector<kernel_image> &images, std::string_view kernel,
                                 kernel_format format) {
  std::string built;
  for (const kernel_image &i : images)
    if (i.kernel == kernel && i.format == format)
      built += (built.empty() ? "" : ", ") + std::string("sm_") + std::to_string(i.sm);
  return built.empty() ? "none is registered" : "built for " + built;
}

} // namespace

std::string kernel_image::describe() const {
  std::string text = kernel + "." + to_string(format);
  if (format != kernel_format::fatbin)
    text += (format == kernel_format::ptx ? " (compute_" : " (sm_") + std::to_string(sm) + ")";
  return text;
}

kernel_registry &kernel_registry::instance() {
  static kernel_registry r;
  return r;
}

void kernel_registry::add(kernel_image image) noexcept {
  try {
    for (const kernel_image &i : m_images)
      if (i.kernel == image.kernel && i.format == image.format && i.sm == image.sm &&
          m_problem.empty())
        m_problem = "kernel image " + image.describe() + " is registered twice";
    m_images.push_back(std::move(image));
  } catch (...) { // out of memory at static initialisation: the lookup then finds nothing
  }
}

const kernel_image &kernel_registry::find(std::string_view name, int device_sm) const {
  if (!m_problem.empty())
    throw std::invalid_argument(m_problem);
  const auto [kernel, format] = split_kernel_image_name(name);
  const kernel_image *best = nullptr;
  int best_fit = 0;
  for (const kernel_image &i : m_images) {
    const int fit = i.kernel == kernel && i.format == format ? kernel_image_fit(i, device_sm) : 0;
    if (fit > best_fit) {
      best = &i;
      best_fit = fit;
    }
  }
  if (best == nullptr)
    throw std::invalid_argument("kernel image '" + std::string(name) + "': none runs on sm_" +
                                std::to_string(device_sm) + " (" +
                                kernel_image_choices(m_images, kernel, format) + ")");
  return *best;
}

kernel_image_registrar::kernel_image_registrar(const char *kernel, kernel_format format, int sm,
                                               const unsigned char *data,
                                               std::size_t size) noexcept {
  try {
    kernel_registry::instance().add({kernel, format, sm, {data, size}});
  } catch (...) { // std::string's allocation; see kernel_registry::add
  }
}

const char *to_string(kernel_format f) noexcept {
  switch (f) {
  case kernel_format::ptx:
    return "ptx";
  case kernel_format::cubin:
    return "cubin";
  case kernel_format::fatbin:
    return "fatbin";
  }
  return "?";
}

} // namespace cuparity
