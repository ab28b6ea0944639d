// Reading a suite's flakes file, and matching case ids against it.
#include "harness/matrix/flakes.hpp"

#include "harness/matrix/text.hpp"
#include "harness/protocol/case_ids.hpp"

#include <filesystem>
#include <fstream>

namespace cuparity {
using matrix_detail::first_control;
using matrix_detail::in_quotes;

namespace {

/// A flakes file is a short hand-written list; a bigger one is a mistake (a results file named
/// by accident), refused before it is read.
constexpr std::uintmax_t flakes_max_bytes = 1 << 20;

[[noreturn]] void flakes_error(const std::string &path, std::size_t line, std::size_t column,
                               const std::string &what) {
  throw matrix_error(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                     what);
}

std::string read_flakes_text(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::weakly_canonical(path, ec) == "/dev/null")
    return ""; // the empty flakes file, as /dev/null is the empty baseline
  if (!fs::is_regular_file(path, ec))
    throw matrix_error(path + ": no such flakes file (a regular file of `<glob> <reason>` lines)");
  if (fs::file_size(path, ec) > flakes_max_bytes)
    throw matrix_error(path + ": a flakes file of more than 1 MiB is not one");
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  if (!in.is_open() || in.bad())
    throw matrix_error(path + ": cannot be read");
  return text;
}

} // namespace

std::vector<flake_rule> read_flakes(const std::string &path, const std::string &suite) {
  const std::string text = read_flakes_text(path);
  std::vector<flake_rule> rules;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#')
      continue;
    if (auto c = first_control(line))
      flakes_error(path, line_no, *c + 1, "a control character (one entry per printable line)");
    const std::size_t gap = line.find_first_of(" \t", first);
    const std::string glob = line.substr(first, gap - first);
    const std::size_t reason_at =
        gap == std::string::npos ? gap : line.find_first_not_of(" \t", gap);
    if (reason_at == std::string::npos)
      flakes_error(path, line_no, first + 1,
                   in_quotes(glob) + " has no reason: write `<glob> <why it is excused>`");
    if (glob.rfind(suite + ".", 0) != 0)
      flakes_error(path, line_no, first + 1,
                   in_quotes(glob) + " does not start with \"" + suite +
                       ".\": it would match "
                       "no test of suite " +
                       in_quotes(suite));
    rules.push_back({glob,
                     line.substr(reason_at),
                     {path, static_cast<int>(line_no), static_cast<int>(first + 1)}});
  }
  return rules;
}

const flake_rule *find_flake(const std::vector<flake_rule> &rules, const std::string &case_id) {
  for (const auto &r : rules)
    if (case_matches(case_id, r.glob))
      return &r;
  return nullptr;
}

} // namespace cuparity
