// File names and directories of a run's output directory.
#include "harness/run/run_layout.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

namespace cuparity {
namespace fs = std::filesystem;

std::string file_safe(const std::string &s) {
  std::string out;
  for (char ch : s)
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')
               ? ch
               : '_';
  return out;
}

std::string cell_log_path(const std::string &log_dir, const std::string &cell_id) {
  return log_dir + "/" + file_safe(cell_id) + ".log";
}

std::string lock_directory(const std::string &out_dir, const std::string &gpu) {
  const std::string primary = gpu.substr(0, gpu.find(','));
  std::string dir = out_dir + "/locks/gpu" + (primary.empty() ? "-default" : "-" + primary);
  std::error_code ec;
  fs::create_directories(dir, ec);
  return fs::absolute(dir).string();
}

} // namespace cuparity
