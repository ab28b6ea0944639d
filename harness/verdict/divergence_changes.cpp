// New and gone divergences between two runs, matched by where they lie, not by host paths.
#include "harness/verdict/divergence_changes.hpp"

#include <algorithm>
#include <set>

namespace cuparity {
namespace {

/// The text of `key` between `from` and the next of `to` (the rest when `to` is absent).
std::string part_of(const std::string &key, const std::string &from, const std::string &to) {
  const auto start = key.find(from);
  if (start == std::string::npos)
    return "";
  const auto begin = start + from.size();
  const auto end = key.find(to, begin);
  return key.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::set<std::string> identities(const std::vector<divergence> &list) {
  std::set<std::string> out;
  for (const auto &d : list)
    out.insert(divergence_identity(d));
  return out;
}

/// The divergences of `list` whose identity `other` has not, sorted by identity.
std::vector<divergence> not_in(const std::vector<divergence> &list,
                               const std::set<std::string> &other) {
  std::vector<divergence> out;
  for (const auto &d : list)
    if (!other.count(divergence_identity(d)))
      out.push_back(d);
  std::stable_sort(out.begin(), out.end(), [](const divergence &x, const divergence &y) {
    return divergence_identity(x) < divergence_identity(y);
  });
  return out;
}

} // namespace

std::string divergence_place(const std::string &group_key) {
  // semantic_key writes "stream0=<mode> driver=<path> include=<path>" (compare.hpp).
  const auto stream0 = part_of(group_key, "stream0=", " driver=");
  const auto driver = part_of(group_key, " driver=", " include=");
  if (stream0.empty() && driver.empty())
    return group_key;
  const auto slash = driver.rfind('/');
  return "stream0=" + stream0 +
         " driver=" + (slash == std::string::npos ? driver : driver.substr(slash + 1));
}

std::string divergence_identity(const divergence &d) {
  return d.case_id + " " + d.key + " [" + divergence_place(d.group) + "]";
}

divergence_changes compare_divergences(const std::vector<divergence> &a,
                                       const std::vector<divergence> &b) {
  return {not_in(b, identities(a)), not_in(a, identities(b))};
}

} // namespace cuparity
