// Reading and writing baseline (expected-outcome) files.
#include "harness/verdict/baseline.hpp"

#include "harness/io/output_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cuparity {

namespace {

/// A folder opens as a stream that reads nothing (it would be an empty baseline), and a device
/// like /dev/zero as one endless line; /dev/null is the one empty baseline that is no file.
void check_baseline_file(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw std::runtime_error(path + ": is a folder, not a baseline file");
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec) &&
      fs::weakly_canonical(path, ec) != "/dev/null")
    throw std::runtime_error(path + ": is not a regular file, so not a baseline file");
}

} // namespace

std::vector<baseline_entry> read_baseline(const std::string &path) {
  check_baseline_file(path);
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot read the baseline file");
  std::vector<baseline_entry> out;
  std::string line, comment;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) {
      comment.clear();
      continue;
    }
    if (line[first] == '#') {
      comment += (comment.empty() ? "" : "\n") + line.substr(first);
      continue;
    }
    auto c1 = line.find(','), c2 = line.rfind(',');
    if (c1 == std::string::npos || c1 == c2)
      throw std::runtime_error(path + ":" + std::to_string(n) +
                               ": expected 'case,cell,outcome', got '" + line + "'");
    baseline_entry e;
    e.case_id = line.substr(first, c1 - first);
    e.cell = line.substr(c1 + 1, c2 - c1 - 1);
    std::string o = line.substr(c2 + 1);
    while (!o.empty() && (o.back() == ' ' || o.back() == '\r'))
      o.pop_back();
    auto parsed = parse_outcome(o);
    if (!parsed)
      throw std::runtime_error(path + ":" + std::to_string(n) + ": unknown outcome '" + o + "'");
    if (*parsed == outcome::pass)
      throw std::runtime_error(path + ":" + std::to_string(n) +
                               ": a baseline lists expected non-passes; 'pass' does not belong");
    e.expected = *parsed;
    e.comment = comment;
    e.line = n;
    comment.clear();
    out.push_back(std::move(e));
  }
  if (in.bad())
    throw std::runtime_error(path + ": cannot read the baseline file (read error)");
  return out;
}

void write_baseline(const std::string &path, const std::vector<nlohmann::json> &case_records,
                    const std::string &header) {
  std::vector<std::string> lines;
  for (const auto &r : case_records) {
    auto o = parse_outcome(r.value("outcome", "error"));
    if (o && is_success(*o))
      continue;
    lines.push_back(r.value("case", "") + "," + r.value("cell", "") + "," +
                    r.value("outcome", "error"));
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::ostringstream out;
  out << "# " << header << "\n# case,cell,outcome; add a comment line above an entry with the "
      << "reason and an issue link\n";
  for (const auto &l : lines)
    out << l << "\n";
  write_output_file(path, out.str(), "the baseline file");
}

} // namespace cuparity
