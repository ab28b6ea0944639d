// What the audit library (tools/capture/audit) recorded, one file per process, read into structs.
#pragma once

#include "harness/capture/captured_map.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// A symbol of the driver bound by the dynamic linker: a PLT or load-time binding, or dlsym.
struct bind_event {
  std::string via;      ///< "plt" or "dlsym"
  std::string symbol;   ///< the name asked for (and bound)
  std::string library;  ///< the driver object that defines it
  std::string caller;   ///< the object that asked ("" for the main program)
  bool wrapped = false; ///< a cuGetProcAddress handed out as the audit's recording wrapper
};

/// One cuGetProcAddress / cuGetProcAddress_v2 call, as the driver answered it.
struct proc_event {
  std::string abi;    ///< "cuGetProcAddress_v2" or "cuGetProcAddress" (the 11.3-11.8 ABI)
  std::string symbol; ///< the base name asked for ("" for a null pointer)
  long long version = 0;
  std::uint64_t flags = 0;
  int result = 0;            ///< the CUresult returned
  std::optional<int> status; ///< symbolStatus (the v2 ABI only)
  bool null_pointer = true;
  std::optional<std::string> pointer_symbol;  ///< dladdr's exact symbol of the answer
  std::optional<std::string> pointer_library; ///< the object the answer lies in
  std::string caller; ///< the object the call came from (dladdr of the return address)
  bool wrapped = false;
};

/// A process of the command whose bindings are not (all) in the map: one that loaded the audit
/// library but could not open its events file (it said so in its parent's), or one still running
/// when the command exited.
struct lost_process {
  long pid = 0;
  std::string exe;
  std::string why;
};

/// One program image of the captured tree: a process, or what it exec'd without forking (a shell
/// or `env` running the program is one pid, two images).
struct captured_process {
  long pid = 0, ppid = 0;
  int image = 0;       ///< 0, then 1, 2, ... after each exec in the same pid
  bool forked = false; ///< made by fork() without exec: it shares its parent's objects
  std::string exe;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment; ///< the binding-selection variables set
  std::vector<std::string> objects;               ///< every object loaded, in order
  std::vector<std::string> drivers;               ///< the objects taken as the driver
  std::vector<bind_event> binds;
  std::vector<proc_event> requests;
  std::size_t unreadable_lines = 0; ///< lines that were no event (a process killed mid-line)
  std::vector<lost_process> lost;   ///< children that could not write their own file said so here
};

/// What the Python start-up hook (tools/capture/python_hook) wrote at a process's exit: the
/// driver table cuda.bindings resolved in it, or why there is none (package-table-<pid>.json).
struct package_table_event {
  std::string file; ///< the event file's name, for messages
  long pid = 0;
  std::string package;                ///< the distribution ("cuda-bindings"), else the module
  std::optional<std::string> version; ///< the distribution's, else the module's __version__
  std::optional<std::string> module;  ///< the table module it came from
  std::optional<std::string> module_file, folder; ///< its file; the package's folder
  std::string status; ///< "ok", "not_bound", "no_table" or "failed" (the hook's words in `why`)
  std::string why;
  std::map<std::string, std::optional<table_pointer>> functions; ///< none: an address of 0
};

/// Reads every package-table-<pid>.json of `dir`, ordered by pid. A file that is no such event
/// (not JSON, a member of the wrong kind) is kept as status "failed", `why` naming the file and
/// the member: the hook ran in that process, so its table is never silently absent.
[[nodiscard]] std::vector<package_table_event> read_package_tables(const std::string &dir);

/// Reads every process-<pid>.jsonl of `dir`, one record per image, ordered by start (parents
/// before children, then pid and image). A file whose first line is no process line is skipped
/// and named in `problems` (a process whose events are lost: the capture is incomplete).
[[nodiscard]] std::vector<captured_process> read_capture_dir(const std::string &dir,
                                                             std::vector<std::string> &problems);

} // namespace cuparity
