// A binding map as read: binding_map/1 (one package, tools/capture) or /2 (any process tree).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// A captured map that cannot be read: the message names the file and the member.
class map_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A cuGetProcAddress request behind a /2 entry: what was asked and what the driver said.
struct proc_request {
  std::string abi; ///< "cuGetProcAddress_v2" or "cuGetProcAddress"
  long long version = 0;
  std::uint64_t flags = 0;
  int result = 0;
  std::optional<int> status;
};

/// One function as the package (or process) bound it.
struct captured_entry {
  std::string function;               ///< the base name cuGetProcAddress takes
  std::string raw_name;               ///< the package's own name for it (/2: the name asked)
  std::optional<std::string> symbol;  ///< dladdr's symbol of its pointer; none: no pointer
  std::optional<std::string> library; ///< the file the pointer lies in
  // binding_map/2 only:
  std::string source = "package";            ///< "plt", "dlsym" or "proc" (/1: "package")
  long process = 0;                          ///< the pid that bound it
  int image = 0;                             ///< which image of that pid (1, 2, ... after exec)
  std::string caller;                        ///< the object that asked
  std::optional<std::string> caller_package; ///< the Python distribution that owns `caller`
  std::optional<proc_request> request;       ///< source "proc": the request
  std::size_t count = 1;                     ///< how often exactly this happened
};

/// One process image of a /2 map.
struct map_process {
  long pid = 0, ppid = 0;
  int image = 0;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment; ///< the selection variables that were set
  std::set<std::string> packages;                 ///< distributions owning its loaded objects
};

/// One pointer of a package's own table, as dladdr named it in the package's process.
struct table_pointer {
  std::optional<std::string> symbol;  ///< none: no exported symbol starts exactly there
  std::optional<std::string> library; ///< none: no loaded object holds it
};

/// The driver table a package resolved in one process, as it reports it itself (/2's
/// package_tables[]: cuda.bindings' _inspect_function_pointers(), written by the capture's Python
/// start-up hook), or why there is none.
struct package_table {
  long process = 0;
  int image = 0;
  std::string package;                ///< "cuda-bindings" (the distribution), else the module
  std::optional<std::string> version; ///< the package's version, when known
  std::optional<std::string> module;  ///< the table module (cuda.bindings._internal.driver)
  std::optional<std::string> file;    ///< that module's file
  std::optional<std::string> folder;  ///< the package's folder: what lies in it is the package's
  /// "ok" (functions read); "not_bound" (the package had bound nothing: not read); "no_table" (a
  /// version without _inspect_function_pointers); "failed" (reading it failed); "not_recorded"
  /// (the package bound the driver, but no table was written: `note` says why)
  std::string status;
  std::string note;
  std::map<std::string, std::optional<table_pointer>> functions; ///< none: an address of 0
};

/// A cuparity.binding_map/1 or /2 file (docs/capture.md).
struct captured_map {
  std::string path;
  int schema = 1;
  std::string kind; ///< "cuda.bindings" or "numba" (/1), "process" (/2)
  std::string name, version;
  std::map<std::string, std::optional<std::string>> environment;
  std::string status; ///< "ok", "import_failed" or "load_failed" (/1); "ok" or "no_driver" (/2)
  std::string error;
  std::vector<map_process> processes;      ///< /2 only
  std::string driver_path;                 ///< /2: the first driver loaded ("" when none)
  std::optional<long long> driver_version; ///< /2: its cuDriverGetVersion
  std::vector<captured_entry> entries;
  std::vector<package_table> package_tables; ///< /2 only; absent from the file: none

  [[nodiscard]] const map_process *process(long pid, int image) const noexcept;
};

/// Reads and checks a captured map. Throws map_error ("FILE: member: problem").
[[nodiscard]] captured_map read_captured_map(const std::string &path);

} // namespace cuparity
