// Formats driver_error messages: `cuMemFree (cuMemFree_v2) -> CUDA_ERROR_INVALID_VALUE (1) on
// CUdeviceptr 0x7f0000 [internal]`.
#include "harness/driver/driver_error.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace cuparity {
namespace {

std::string site_text(const std::source_location &site) {
  if (site.line() == 0)
    return {};
  return " at " + std::filesystem::path(site.file_name()).filename().string() + ":" +
         std::to_string(site.line());
}

std::string format(const driver_error::details &d) {
  std::string s = d.entry;
  if (!d.symbol.empty() && d.symbol != d.entry)
    s += " (" + d.symbol + ")";
  if (d.not_bound)
    s += ": the binding under test does not bind this function";
  else if (d.missing_function)
    s += ": the driver does not provide this function";
  else
    s += " -> " + d.code_name + " (" + std::to_string(static_cast<int>(d.code)) + ")";
  if (!d.handles.empty())
    s += " on " + d.handles;
  s += " [" + d.backend + "]" + site_text(d.site);
  if (!d.detail.empty())
    s += ": " + d.detail;
  return s;
}

} // namespace

std::string handle_text(const char *type, unsigned long long handle) {
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%llx", handle);
  return std::string(type) + " " + hex;
}

std::string handle_text(const char *type, const void *handle) {
  return handle_text(type,
                     static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(handle)));
}

driver_error::driver_error(details d) : std::runtime_error(format(d)), m_details(std::move(d)) {}

} // namespace cuparity
