// The packages axis at run time: each value's environment installed once, cached, and found.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cuparity {

/// A cell whose packages value could not be installed: what() names the requirements, the
/// installer's last lines and the cache folder. The runner makes it the cell's cell_error.
class package_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One value of the packages axis and the folder that holds it.
struct package_environment {
  std::string value;                     ///< as the cell holds it: requirements joined by spaces
  std::vector<std::string> requirements; ///< in order
  std::string installer;                 ///< "uv" or "pip" (what auto chose), "" if none
  std::string key;                       ///< the cache key: 16 hex digits of a SHA-256
  std::string folder;                    ///< <cache>/<key>: first on the cell's PYTHONPATH
  bool cached = false;                   ///< the folder is there (complete: it is renamed in)
  bool installed_now = false;            ///< this process installed it (else it was reused)
  double install_s = 0;
  /// (name, version) of each *.dist-info in the folder, by name.
  std::vector<std::pair<std::string, std::string>> distributions;
  std::string log;   ///< the installer's output of the last install: <cache>/<key>.log
  std::string error; ///< why it cannot be used ("" when ready)
};

/// Where the environments are kept: [packages] cache, else $XDG_CACHE_HOME/cuparity/packages,
/// else ~/.cache/cuparity/packages.
[[nodiscard]] std::string package_cache_dir(const package_settings &s);

/// The environment of `value` as the cache has it now, without installing: its key (a digest of
/// the requirements, the installer and its options, every wheel's name, size and mtime in the
/// find_links folders, and the interpreter's version), its folder and, when cached, its
/// distributions. `error` says why it could not be located (no interpreter, no installer).
[[nodiscard]] package_environment locate_package_environment(const package_settings &s,
                                                             const std::string &value);

/// The environment of `value`, installed first unless cached: under <cache>/<key>.lock (two
/// processes installing one value install it once), into a temporary folder renamed to
/// <cache>/<key> once complete (a killed install never leaves a folder that looks cached). A
/// failure is in `error`; one line per value goes to `log`.
[[nodiscard]] package_environment
prepare_package_environment(const package_settings &s, const std::string &value, std::ostream &log);

/// Every distinct packages value of `cells`, prepared once per process (a later call, or a cell
/// asking package_folder, gets the same answer), as provenance's `packages` member
/// (docs/formats.md): the settings, each value's environment, and each cell's distributions.
/// Null when the matrix has no packages axis.
[[nodiscard]] nlohmann::json prepare_package_environments(const matrix &m,
                                                          const std::vector<const cell *> &cells,
                                                          std::ostream &log);

/// The folder the cell's processes find first on PYTHONPATH; "" when the cell installs nothing
/// (no packages axis, or its value is false). Prepares the value if no earlier call did. Throws
/// package_error when it cannot be installed.
[[nodiscard]] std::string package_folder(const matrix &m, const cell &c);

/// The environment's JSON: value, requirements, installer, key, folder, reused, distributions,
/// error.
[[nodiscard]] nlohmann::json package_environment_json(const package_environment &e);

} // namespace cuparity
