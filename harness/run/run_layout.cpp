// File names and directories of a run's output directory.
#include "harness/run/run_layout.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// Longest name kept as it is: well under NAME_MAX (255) with room for ".log" and the like. A cell
/// id of a matrix with long values (fault specs, paths) reached 260 characters on the H200, and the
/// runner could not open its log.
constexpr std::size_t kept_length = 96;

/// 64-bit FNV-1a: a stable digest that keeps shortened or rewritten names apart.
std::uint64_t fnv1a(const std::string &s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

} // namespace

std::string digest_hex(const std::string &s) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(fnv1a(s)));
  return digest;
}

namespace {

/// "-" and 16 hex digits at the end: the shape of a digested name.
bool ends_like_digest(const std::string &s) {
  if (s.size() < 17 || s[s.size() - 17] != '-')
    return false;
  for (std::size_t i = s.size() - 16; i < s.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

} // namespace

std::string file_safe(const std::string &s) {
  std::string out;
  for (char ch : s)
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')
               ? ch
               : '_';
  // Kept as it is only when nothing was replaced, it is short, and it cannot be mistaken for a
  // digested name. Otherwise a readable prefix and a digest of the whole id: "a/b" and "a_b"
  // (labels of one matrix) once shared a log and a CTest --out, and one cell was lost.
  if (out == s && out.size() <= kept_length && out != "." && out != ".." && !out.empty() &&
      !ends_like_digest(out))
    return out;
  return out.substr(0, kept_length - 17) + "-" + digest_hex(s);
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
