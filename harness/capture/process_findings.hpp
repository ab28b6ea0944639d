// What a process tree's binding map says beyond each entry: the configuration each entry answers
// to, and the findings that need several entries of one process (binding_map/2).
#pragma once

#include "harness/capture/map_audit.hpp"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cuparity {

/// One object that binds driver symbols itself (by PLT or dlsym) in one process image: pid,
/// image, the caller's path.
using binder_key = std::tuple<long, int, std::string>;

/// The stream-0 mode a direct binder chose, as what it bound shows: the functions with a
/// per-thread variant it bound bare, and those it bound per-thread. Functions without a
/// per-thread variant are no evidence; names the driver API does not declare are none either.
struct binder_mode {
  std::set<std::string> legacy, per_thread;
};

/// Every direct binder of `m` (PLT and dlsym entries) that no known package governs, with what
/// it bound. Built once per map: the audit looks each entry's binder up.
[[nodiscard]] std::map<binder_key, binder_mode> infer_binder_modes(const captured_map &m);

/// What `e` should have bound, from the best evidence there is: the documented variable of a known
/// package that owns the caller (cuda.bindings, Numba; Numba's ctypes binding asks through
/// Python's _ctypes module), else the flags of its cuGetProcAddress request (cudart's evidence),
/// else the mode its binder's own binds show (`binders`: infer_binder_modes), else nothing
/// (`known` false, `why` says why).
[[nodiscard]] ptds_expectation expectation_for(const captured_map &m, const captured_entry &e,
                                               const std::map<binder_key, binder_mode> &binders);

/// The package whose documented variable governs `e` ("cuda.bindings", "numba"), or "".
[[nodiscard]] std::string governing_package(const captured_map &m, const captured_entry &e);

/// Per process and function: two ABIs bound, both stream-0 modes bound, and functions bound by
/// PLT or dlsym in a process that resolves others through cuGetProcAddress but never this one;
/// per direct binder: both modes bound (mixed_modes, naming the functions each way).
[[nodiscard]] std::vector<map_finding>
process_findings(const captured_map &m, const std::map<binder_key, binder_mode> &binders);

} // namespace cuparity
