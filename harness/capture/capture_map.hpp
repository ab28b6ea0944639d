// A captured process tree written as a binding map (cuparity.binding_map/2, docs/capture.md).
#pragma once

#include "harness/capture/capture_events.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

/// How the captured command ran and ended.
struct capture_facts {
  std::vector<std::string> command;
  int exit_status = 0;               ///< as a shell reports it: the exit code, or 128 + signal
  std::string captured;              ///< UTC, ISO 8601
  std::vector<std::string> problems; ///< files of the capture folder that could not be read
  nlohmann::json lost = nlohmann::json::array(); ///< processes the map misses: pid, exe, why
  bool python_hook = true; ///< the Python start-up hook was on PYTHONPATH (no --no-python-hook)
};

/// The base name cuGetProcAddress takes: trailing `_v<N>`, `_ptds` and `_ptsz` removed,
/// repeatedly (`cuMemcpyHtoD_v2_ptds` -> `cuMemcpyHtoD`).
[[nodiscard]] std::string base_function(std::string_view symbol);

/// Whether `symbol` is a per-thread default stream variant (`_ptds` or `_ptsz`).
[[nodiscard]] bool is_per_thread_symbol(std::string_view symbol) noexcept;

/// The map of `processes` (read_capture_dir): one entry per distinct binding of a driver symbol
/// per process and path (plt, dlsym, proc), with how often it happened; the distributions that own
/// each process's loaded objects; the driver's path and cuDriverGetVersion. Status "no_driver"
/// when no process loaded one. `tables` (read_package_tables) go to package_tables[], each to the
/// last image of its pid (the hook writes at exit); a table whose pid is no captured process is
/// left out (the caller names it a problem). A process image where something of a cuda/bindings
/// folder asked cuGetProcAddress but no table was written gets one of status "not_recorded".
[[nodiscard]] nlohmann::json capture_map_json(const std::vector<captured_process> &processes,
                                              const capture_facts &facts,
                                              const std::vector<package_table_event> &tables = {});

/// Whether `pid` has an image among `processes`.
[[nodiscard]] bool is_captured(const std::vector<captured_process> &processes, long pid) noexcept;

} // namespace cuparity
