// The kernel module's release: NVML first (what nvidia-smi shows), then the module's /proc file,
// which exists wherever the module is loaded, NVML or not (a container without libnvidia-ml).
#include "harness/platform/kernel_driver_release.hpp"

#include "harness/platform/nvml_library.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace cuparity {
namespace {

// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80.
constexpr unsigned nvml_version_buffer = 80;
using system_version_fn = int (*)(char *, unsigned);

/// The whitespace-separated words of `line`.
std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;)
    out.push_back(std::move(w));
  return out;
}

/// The release after "Kernel Module" in one line, or "".
std::string release_in_line(std::string_view line) {
  constexpr std::string_view marker = "Kernel Module";
  const auto at = line.find(marker);
  if (at == std::string_view::npos)
    return {};
  const auto after = words(line.substr(at + marker.size()));
  // "Open Kernel Module for x86_64  570.86.15": the architecture comes first.
  const std::size_t skip = !after.empty() && after[0] == "for" ? 2 : 0;
  if (after.size() <= skip || !is_release_text(after[skip]))
    return {};
  return after[skip];
}

driver_release nvml_driver_release() {
  const nvml_session nvml;
  auto get = reinterpret_cast<system_version_fn>(nvml.symbol("nvmlSystemGetDriverVersion"));
  std::array<char, nvml_version_buffer> text{};
  if (!get || get(text.data(), text.size()) != 0)
    return {};
  text.back() = '\0'; // whatever NVML wrote, the text ends inside the buffer
  if (!is_release_text(text.data()))
    return {};
  return {text.data(), "nvml"};
}

} // namespace

bool is_release_text(std::string_view text) noexcept {
  if (text.empty() || text.size() > 64 || text[0] < '0' || text[0] > '9' ||
      text.find('.') == std::string_view::npos)
    return false;
  for (char c : text) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && std::string_view("._-+~").find(c) == std::string_view::npos)
      return false;
  }
  return true;
}

std::string release_from_proc_text(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    if (line.find("Kernel Module") != std::string_view::npos)
      return release_in_line(line);
    start = end + 1;
  }
  return {};
}

driver_release read_proc_driver_release(const std::string &path) {
  // A regular file only (the /proc file reads as one): a FIFO at the path must not block the run.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return {};
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4096> buf{}; // the real file is two short lines
  in.read(buf.data(), buf.size());
  const std::string release =
      release_from_proc_text(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  if (release.empty())
    return {};
  return {release, "proc"};
}

driver_release read_kernel_driver_release() {
  try {
    if (auto nvml = nvml_driver_release(); !nvml.text.empty())
      return nvml;
    return read_proc_driver_release();
  } catch (const std::exception &) { // out of memory at worst: no release, the run goes on
    return {};
  }
}

} // namespace cuparity
