// Two witnesses of one binding: the audit library saw what the driver handed the package's
// objects, the package's table says what it kept. They differ when the package patches, caches or
// re-resolves a pointer after asking, or resolves it by another path than cuGetProcAddress.
#include "harness/capture/table_check.hpp"

#include "harness/capture/capture_map.hpp"

#include <filesystem>
#include <map>
#include <set>

namespace cuparity {
namespace {

namespace fs = std::filesystem;

/// Whether `path` lies in `folder` (as written, or once both are resolved).
bool inside(const std::string &path, const std::string &folder) {
  const auto under = [](const fs::path &p, const fs::path &f) {
    const std::string a = p.lexically_normal().string();
    std::string b = f.lexically_normal().string();
    if (!b.empty() && b.back() != '/')
      b += '/';
    return !b.empty() && a.starts_with(b);
  };
  if (path.empty() || folder.empty())
    return false;
  if (under(path, folder))
    return true;
  std::error_code ec, ec2;
  const fs::path p = fs::weakly_canonical(path, ec), f = fs::weakly_canonical(folder, ec2);
  return !ec && !ec2 && under(p, f);
}

bool owned_by(const captured_entry &e, const package_table &t) {
  return (t.folder && inside(e.caller, *t.folder)) ||
         (e.caller_package && *e.caller_package == t.package);
}

/// What a pointer is compared by: its exported symbol, else the object it lies in.
std::string pointer_name(const std::optional<std::string> &symbol,
                         const std::optional<std::string> &library) {
  return symbol ? *symbol : "(no symbol, in " + library.value_or("no object") + ")";
}

/// The audit library hands out its recording wrapper for cuGetProcAddress
/// (tools/capture/audit/cuparity_audit.c), so that is what a package keeps for it.
bool is_capture_wrapper(const std::string &function, const table_pointer &p) {
  return function == "cuGetProcAddress" && p.library &&
         fs::path(*p.library).filename().string().starts_with("libcuparity_audit");
}

struct two_sides {
  std::vector<std::string> keys;         ///< the table's names for the function
  std::set<std::string> table, captured; ///< pointers, by pointer_name
  bool wrapper = false;                  ///< the table holds the capture's wrapper
};

std::string joined(const std::set<std::string> &names) {
  std::string out;
  for (const auto &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string table_name(const package_table &t) {
  return t.package + (t.version ? " " + *t.version : std::string());
}

std::string disagreement(const package_table &t, const std::string &function, const two_sides &s) {
  std::string keys;
  for (const auto &k : s.keys)
    keys += (keys.empty() ? "" : ", ") + k;
  const std::string own = table_name(t) + "'s own table";
  const std::string table_side =
      s.keys.empty() ? own + " has no " + function
      : s.table.empty()
          ? own + " holds no pointer for " + function + " (" + keys + ")"
          : own + " holds " + joined(s.table) + " for " + function + " (" + keys + ")";
  const std::string capture_side =
      s.captured.empty() ? "the capture never saw " + t.package + " bind it"
                         : "the capture saw " + t.package + " bind " + joined(s.captured);
  return "pid " + std::to_string(t.process) +
         (t.image ? " (exec " + std::to_string(t.image) + ")" : std::string()) + ": " + table_side +
         ", but " + capture_side;
}

std::map<std::string, two_sides> both_sides(const captured_map &m, const package_table &t) {
  std::map<std::string, two_sides> by_function;
  for (const auto &[key, p] : t.functions) {
    const std::string function = base_function(key);
    two_sides &s = by_function[function];
    s.keys.push_back(key);
    if (p && is_capture_wrapper(function, *p))
      s.wrapper = true;
    else if (p)
      s.table.insert(pointer_name(p->symbol, p->library));
  }
  for (const auto &e : m.entries)
    if (e.process == t.process && e.image == t.image && e.source == "proc" &&
        (e.symbol || e.library) && owned_by(e, t))
      by_function[e.function].captured.insert(pointer_name(e.symbol, e.library));
  for (auto &[function, s] : by_function)
    if (s.wrapper) // the wrapper stands for whatever the driver answered
      s.table.insert(s.captured.begin(), s.captured.end());
  return by_function;
}

} // namespace

std::vector<map_finding> table_findings(const captured_map &m) {
  std::vector<map_finding> out;
  for (const auto &t : m.package_tables) {
    if (t.status != "ok")
      continue;
    for (const auto &[function, s] : both_sides(m, t)) {
      if (s.table == s.captured)
        continue;
      map_finding f;
      f.kind = finding_kind::table_disagrees;
      f.function = function;
      for (const auto &k : s.keys)
        f.raw_name += (f.raw_name.empty() ? "" : ",") + k;
      f.captured = joined(s.captured);
      f.message = disagreement(t, function, s);
      f.process = t.process;
      f.image = t.image;
      f.source = "proc";
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<std::string> table_notes(const captured_map &m) {
  std::vector<std::string> out;
  for (const auto &t : m.package_tables) {
    if (t.status == "ok")
      continue;
    out.push_back("pid " + std::to_string(t.process) + ": " + table_name(t) +
                  "'s own table was not checked (" + t.status + "): " + t.note);
  }
  return out;
}

} // namespace cuparity
