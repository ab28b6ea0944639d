// The Python probe process's probes (tools/pyprobe/cuparity_pyprobe.py), by name and glob.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// The probes of the Python probe process, as its --list prints them (a CI test holds the two
/// lists equal). Their names start with "py.".
[[nodiscard]] const std::vector<std::string> &python_probe_names();

/// Whether `name` is one of them.
[[nodiscard]] bool is_python_probe(const std::string &name);

/// Whether the glob selects one of them.
[[nodiscard]] bool glob_matches_python_probe(const std::string &glob);

} // namespace cuparity
