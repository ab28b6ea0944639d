// RECORD lists every file a wheel installed, relative to its site folder (the wheel format,
// PEP 376/627), so the owner of an extension module or a bundled library is found by its path,
// without running Python in the captured process.
#include "harness/capture/python_packages.hpp"

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity {
namespace {

namespace fs = std::filesystem;

/// The site folder and the path relative to it, or {"", ""}.
std::pair<std::string, std::string> split_site(const std::string &path) {
  for (const char *marker : {"/site-packages/", "/dist-packages/"}) {
    const auto at = path.rfind(marker);
    if (at != std::string::npos) {
      const std::size_t cut = at + std::char_traits<char>::length(marker);
      return {path.substr(0, cut - 1), path.substr(cut)};
    }
  }
  return {};
}

/// The first CSV field of a RECORD line (a path with a comma is quoted, "" doubling a quote).
std::string first_field(std::string_view line) {
  if (line.empty() || line[0] != '"')
    return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        out += '"';
        ++i;
        continue;
      }
      break;
    }
    out += line[i];
  }
  return out;
}

/// Whether lexically_normal could change `rel`: a "." or ".." component, an empty one, or a
/// trailing separator. Wheels write normal paths, so the slow normalisation is the rare case.
bool maybe_unnormal(std::string_view rel) {
  return rel.empty() || rel == "." || rel == ".." || rel.front() == '/' || rel.back() == '/' ||
         rel.starts_with("./") || rel.starts_with("../") || rel.ends_with("/.") ||
         rel.ends_with("/..") || rel.find("//") != rel.npos || rel.find("/./") != rel.npos ||
         rel.find("/../") != rel.npos;
}

/// A RECORD whole, in one read ("" when unreadable): a torch wheel's lists some 20,000 files.
std::string read_record_text(const fs::path &file) {
  std::string text;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0)
    return text;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  return text;
}

distribution read_metadata(const fs::path &dist_info) {
  distribution d;
  std::ifstream in(dist_info / "METADATA");
  std::string line;
  while (std::getline(in, line) && !line.empty()) { // headers end at the first empty line
    if (line.starts_with("Name: "))
      d.name = line.substr(6);
    else if (line.starts_with("Version: "))
      d.version = line.substr(9);
  }
  if (d.name.empty()) // no METADATA: the folder's name is <name>-<version>.dist-info
    d.name = dist_info.stem().string().substr(0, dist_info.stem().string().rfind('-'));
  return d;
}

/// The first component of a relative path ("numpy" of "numpy/core/x.so").
std::string_view top_of(std::string_view rel) {
  return rel.substr(0, rel.find('/'));
}

/// Whether the RECORD path `rel` (its first field as written) may name one of `wanted`, whose top
/// folders are `tops`: a line of another top folder is passed over at the cost of one compare,
/// unless it is quoted or may climb out of its folder ("..", absolute), which the slow path reads.
bool may_be_wanted(std::string_view rel, const std::set<std::string, std::less<>> &tops) {
  if (rel.empty())
    return false;
  if (rel[0] == '"' || rel[0] == '.' || rel[0] == '/' || rel.find("/..") != rel.npos)
    return true;
  return tops.contains(top_of(rel));
}

/// Finds the owners of `wanted` (relative paths) among the distributions of one site folder.
/// Every RECORD of the folder is read (a site folder with PyTorch and CuPy holds over 100,000
/// lines), so a line costs a compare of its top folder with those wanted, no allocation: the
/// field is taken as written unless it is quoted or not a normal path.
void scan_site(const std::string &site, const std::set<std::string, std::less<>> &wanted,
               std::map<std::string, distribution> &owners) {
  std::set<std::string, std::less<>> tops;
  for (const auto &rel : wanted)
    tops.emplace(top_of(rel));
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(site, ec)) {
    const fs::path p = entry.path();
    if (p.extension() != ".dist-info")
      continue;
    const std::string record = read_record_text(p / "RECORD");
    std::optional<distribution> d;
    for (std::size_t at = 0; at < record.size();) {
      const std::size_t end = std::min(record.find('\n', at), record.size());
      const std::string_view line(record.data() + at, end - at);
      at = end + 1;
      std::string_view rel = line.substr(0, line.find(','));
      if (!may_be_wanted(rel, tops))
        continue;
      std::string unquoted;
      if (!line.empty() && (line[0] == '"' || maybe_unnormal(rel))) {
        unquoted = fs::path(first_field(line)).lexically_normal().string();
        rel = unquoted;
      }
      const auto it = wanted.find(rel);
      if (it == wanted.end())
        continue;
      if (!d)
        d = read_metadata(p);
      owners[*it] = *d;
    }
  }
}

} // namespace

std::map<std::string, distribution> owning_distributions(const std::vector<std::string> &paths) {
  std::map<std::string, std::set<std::string, std::less<>>> wanted; // site -> relative paths
  std::map<std::string, std::pair<std::string, std::string>> where;
  for (const auto &path : paths) {
    auto [site, rel] = split_site(fs::path(path).lexically_normal().string());
    if (site.empty())
      continue;
    wanted[site].insert(rel);
    where[path] = {site, rel};
  }
  std::map<std::string, std::map<std::string, distribution>> found; // site -> rel -> owner
  for (const auto &[site, rels] : wanted)
    scan_site(site, rels, found[site]);
  std::map<std::string, distribution> out;
  for (const auto &[path, sr] : where) {
    const auto &owners = found[sr.first];
    if (const auto it = owners.find(sr.second); it != owners.end())
      out[path] = it->second;
  }
  return out;
}

std::optional<distribution> distribution_listing(const std::string &site,
                                                 const std::string &relative) {
  std::map<std::string, distribution> owners;
  scan_site(site, {relative}, owners);
  if (owners.empty())
    return std::nullopt;
  return owners.begin()->second;
}

} // namespace cuparity
