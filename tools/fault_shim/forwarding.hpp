// The forwarding wrapper of one exported symbol on one path, generated from its cuda.h type.
#pragma once

#include "tools/fault_shim/copy_corruption.hpp"
#include "tools/fault_shim/proc_answers.hpp"
#include "tools/fault_shim/shim_state.hpp"
#include "tools/faults/driver_declarations.hpp"

#include <cstdint>
#include <tuple>
#include <type_traits>

namespace cuparity::shim {

using faults::call_path;

/// What a wrapper returns with nothing to forward to: CUDA_ERROR_NOT_INITIALIZED when the target
/// could not be opened, CUDA_ERROR_NOT_FOUND when it lacks the symbol.
inline CUresult unavailable() {
  return state().target_open ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_NOT_INITIALIZED;
}

template <class T> std::uintptr_t as_address(T value) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<std::uintptr_t>(value);
  else
    return static_cast<std::uintptr_t>(value);
}

// The copy a call made, from its arguments: (dst, src, bytes[, stream]) for every copy symbol.
template <symbol_id Id, class... A> copy_call copy_call_of(const std::tuple<A...> &args) {
  constexpr copy_shape shape = copy_shape_of(Id);
  copy_call call{as_address(std::get<0>(args)), static_cast<std::size_t>(std::get<2>(args)),
                 nullptr, shape};
  if constexpr (shape.async)
    call.stream = std::get<3>(args);
  return call;
}

// Everything but the plain jump: the target's absence, faults, the answer of cuGetProcAddress,
// corrupting a copy's destination.
template <symbol_id Id, call_path Path, class R, class... A>
[[gnu::noinline]] R forward_slow(A... args) {
  const shim_state &s = state();
  std::atomic<std::uint64_t> &counted =
      g_slow_calls[faults::index_of(Id)][Path == call_path::dlsym ? 0 : 1];
  counted.store(counted.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  void *real = s.real[faults::index_of(Id)];
  if (real == nullptr)
    return unavailable();
  const faults::fault_outcome outcome = s.faults.apply(Id, Path);
  if (outcome.fail)
    return static_cast<R>(outcome.code);
  if (outcome
          .legacy) // a per-thread symbol acting as its legacy twin (the parser checked it has one)
    if (const auto twin = faults::legacy_twin(Id); twin && s.real[faults::index_of(*twin)])
      real = s.real[faults::index_of(*twin)];
  const R rc = reinterpret_cast<R (*)(A...)>(real)(args...);
  if (rc != CUDA_SUCCESS)
    return rc;
  if constexpr (Id == symbol_id::cuGetProcAddress || Id == symbol_id::cuGetProcAddress_v2) {
    const auto t = std::forward_as_tuple(args...);
    rewrite_answer(std::get<0>(t), std::get<3>(t), std::get<1>(t));
  }
  if constexpr (copy_shape_of(Id).copy) {
    if (outcome.corrupt)
      corrupt_destination(copy_call_of<Id>(std::forward_as_tuple(args...)));
  }
  return rc;
}

template <symbol_id Id, call_path Path, class Fn> struct wrapper;

/// `call` has exactly the symbol's type. Without a fault it is one flag test and a tail jump to
/// the real function, so the shim adds about a nanosecond to a call and an A/A comparison through
/// it stays a control.
template <symbol_id Id, call_path Path, class R, class... A> struct wrapper<Id, Path, R(A...)> {
  static R call(A... args) {
    const slot &s = g_slots[faults::index_of(Id)];
    if (__builtin_expect(s.fast.load(std::memory_order_acquire), 1))
      return reinterpret_cast<R (*)(A...)>(s.real)(args...);
    return forward_slow<Id, Path, R, A...>(args...);
  }
};

template <symbol_id Id, call_path Path, class Fn>
inline constexpr auto wrapper_of = &wrapper<Id, Path, Fn>::call;

} // namespace cuparity::shim
