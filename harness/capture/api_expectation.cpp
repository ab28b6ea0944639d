// The driver API table's answer for one binding: the symbol due, why none came, which parameter
// types an older ABI has.
#include "harness/capture/api_expectation.hpp"

#include <algorithm>
#include <climits>
#include <set>
#include <utility>
#include <vector>

namespace cuparity {
namespace {

/// A request's version as the table takes it (a map may hold any 64-bit value).
int clamp_version(long long version) noexcept {
  return static_cast<int>(std::clamp<long long>(version, INT_MIN, INT_MAX));
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// The types of a parameter list, split at the commas outside parentheses (a function pointer's
/// own parameters stay whole).
std::vector<std::string_view> split_types(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth <= 0) {
      if (const auto t = trimmed(list.substr(start, i - start)); !t.empty())
        out.push_back(t);
      start = i + 1;
    }
  }
  return out;
}

/// What a changed type means where it is a known widening of CUDA 3.2 (cuda.h's _v2 ABIs).
std::string meaning(std::string_view from, std::string_view to) {
  if (from.starts_with("unsigned int") && to.starts_with("size_t"))
    return "32-bit sizes";
  if (from.starts_with("CUdeviceptr_v1") && to.starts_with("CUdeviceptr_v2"))
    return "32-bit device pointers";
  return {};
}

} // namespace

std::string expected_symbol(const api_function &f, long long version, bool per_thread) {
  const api_abi *abi = f.at_version(clamp_version(version));
  if (!abi)
    return {};
  if (!per_thread || abi->per_thread_version == 0)
    return std::string(abi->symbol);
  return abi->per_thread_version <= version ? std::string(abi->per_thread_symbol) : std::string();
}

const api_abi &newest_abi(const api_function &f, long long driver_version) noexcept {
  const api_abi *at = driver_version > 0 ? f.at_version(clamp_version(driver_version)) : nullptr;
  return at ? *at : f.newest();
}

int newest_query_version(const api_function &f, bool per_thread,
                         long long driver_version) noexcept {
  const api_abi &n = newest_abi(f, driver_version);
  return per_thread ? std::max(n.version, n.per_thread_version) : n.version;
}

bool mode_matters(const api_symbol &s) noexcept {
  return s.per_thread || (s.abi && s.abi->per_thread_version != 0);
}

std::string null_entry_reason(const api_function &f, long long version, long long driver_version) {
  const int first = f.abis.front().version;
  if (version < first)
    return "asked at " + std::to_string(version) + ", below its first ABI (" +
           std::to_string(first) + ")";
  if (driver_version <= 0)
    return "the driver lacks it for no reason the table gives (its first ABI is " +
           std::to_string(first) + "; the driver's version is not known)";
  const std::string driver = std::to_string(driver_version);
  if (first > driver_version)
    return "the function (first ABI " + std::to_string(first) + ") is newer than the driver (" +
           driver + ")";
  if (const api_abi *due = f.at_version(clamp_version(version));
      due && due->version > driver_version)
    return "the ABI due at " + std::to_string(version) + " (" + std::string(due->symbol) + ", " +
           std::to_string(due->version) + ") is newer than the driver (" + driver + ")";
  // Measured on driver 580.159.04 (CUDA 13.0): cuda.bindings 13.3.1 asked 34 functions at
  // 13010-13030, and each got CUDA_ERROR_INVALID_VALUE and no pointer, known ones included.
  if (version > driver_version)
    return "asked above the driver's own version (" + driver + ")";
  return "the driver lacks it for no reason the table gives (its first ABI is " +
         std::to_string(first) + ")";
}

std::string cuda_version_text(int version) {
  return "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string parameter_difference(std::string_view bound, std::string_view newest) {
  const auto a = split_types(bound), b = split_types(newest);
  if (a.size() != b.size())
    return std::to_string(a.size()) + " parameter" + (a.size() == 1 ? "" : "s") +
           " where the newest has " + std::to_string(b.size());
  std::set<std::pair<std::string_view, std::string_view>> seen;
  std::string out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || !seen.insert({a[i], b[i]}).second)
      continue;
    const std::string why = meaning(a[i], b[i]);
    out += (out.empty() ? "`" : ", `") + std::string(a[i]) + "` where " +
           (out.empty() ? "the newest" : "it") + " has `" + std::string(b[i]) + "`" +
           (why.empty() ? "" : " (" + why + ")");
  }
  return out;
}

} // namespace cuparity
