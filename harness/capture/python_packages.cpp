// RECORD lists every file a wheel installed, relative to its site folder (the wheel format,
// PEP 376/627), so the owner of an extension module or a bundled library is found by its path,
// without running Python in the captured process.
#include "harness/capture/python_packages.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

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
std::string first_field(const std::string &line) {
  if (line.empty() || line[0] != '"')
    return line.substr(0, line.find(','));
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

/// Finds the owners of `wanted` (relative paths) among the distributions of one site folder.
void scan_site(const std::string &site, const std::set<std::string> &wanted,
               std::map<std::string, distribution> &owners) {
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(site, ec)) {
    const fs::path p = entry.path();
    if (p.extension() != ".dist-info")
      continue;
    std::ifstream record(p / "RECORD");
    std::string line;
    std::optional<distribution> d;
    while (std::getline(record, line)) {
      const std::string rel = fs::path(first_field(line)).lexically_normal().string();
      if (!wanted.count(rel))
        continue;
      if (!d)
        d = read_metadata(p);
      owners[rel] = *d;
    }
  }
}

} // namespace

std::map<std::string, distribution> owning_distributions(const std::vector<std::string> &paths) {
  std::map<std::string, std::set<std::string>> wanted; // site -> relative paths
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

} // namespace cuparity
