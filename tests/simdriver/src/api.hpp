// The macro that defines one exported driver function together with its hidden twin.
//
// Each exported symbol S is written once as
//     CUPARITY_SIM_API(S, (params), (args), corrupt) { body }
// and becomes three functions:
//   - extern "C" S: the exported one (what dlsym finds); applies `any` and `dlsym` faults;
//   - cuparity::sim::twin::S: hidden, same type; applies `any` and `proc` faults. cuGetProcAddress
//     returns it instead of S only while S has a `dlsym` or `proc` fault, so a `dlsym` fault stays
//     off the proc path, and otherwise the binding audit sees exactly the exported address, as on
//     the real driver (the fault shim follows the same rule);
//   - cuparity::sim::body::S: the behaviour, shared by both.
// `corrupt` is an expression run after a successful call with an active `corrupt` fault: it
// perturbs an out-parameter (bump(p) adds 1). Data written by queued work is perturbed by the
// body itself (see corrupt_requested()), so use (void)0 there.
#pragma once

#include "sim.hpp"

namespace cuparity::sim {

template <class Body, class Corrupt>
[[gnu::noinline]] CUresult gate_slow(symbol_id id, call_path path, Body &body, Corrupt &corrupt) {
  (void)cfg(); // the first API call of the process reads the configuration
  if (g_fault_gate.load(std::memory_order_acquire) != 2)
    return body();
  const faults::fault_outcome outcome = cfg().faults.apply(id, path);
  if (outcome.fail)
    return static_cast<CUresult>(outcome.code);
  if (!outcome.corrupt && !outcome.legacy)
    return body();
  set_corrupt_requested(outcome.corrupt);
  set_legacy_requested(outcome.legacy);
  const CUresult result = body();
  set_corrupt_requested(false);
  set_legacy_requested(false);
  if (result == CUDA_SUCCESS && outcome.corrupt)
    corrupt();
  return result;
}

template <call_path Path, class Body, class Corrupt>
inline CUresult gate(symbol_id id, Body &&body, Corrupt &&corrupt) {
  if (__builtin_expect(g_fault_gate.load(std::memory_order_relaxed) != 1, 0))
    return gate_slow(id, Path, body, corrupt);
  return body();
}

} // namespace cuparity::sim

#define CUPARITY_SIM_API(sym, params, args, corrupt_expr)                                          \
  namespace cuparity::sim::body {                                                                  \
  static CUresult sym params;                                                                      \
  [[maybe_unused]] static const bool sym##_corrupt_noted =                                         \
      ::cuparity::sim::note_corrupt_expr(::cuparity::sim::symbol_id::sym, #corrupt_expr);          \
  }                                                                                                \
  extern "C" CUresult CUDAAPI sym params {                                                         \
    return ::cuparity::sim::gate<::cuparity::sim::call_path::dlsym>(                               \
        ::cuparity::sim::symbol_id::sym, [&]() { return ::cuparity::sim::body::sym args; },        \
        [&]() {                                                                                    \
          using ::cuparity::sim::bump;                                                             \
          corrupt_expr;                                                                            \
        });                                                                                        \
  }                                                                                                \
  namespace cuparity::sim::twin {                                                                  \
  CUresult sym params {                                                                            \
    return ::cuparity::sim::gate<::cuparity::sim::call_path::proc>(                                \
        ::cuparity::sim::symbol_id::sym, [&]() { return ::cuparity::sim::body::sym args; },        \
        [&]() {                                                                                    \
          using ::cuparity::sim::bump;                                                             \
          corrupt_expr;                                                                            \
        });                                                                                        \
  }                                                                                                \
  }                                                                                                \
  CUresult cuparity::sim::body::sym params
