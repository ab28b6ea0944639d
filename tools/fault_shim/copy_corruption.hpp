// `corrupt` in the fault shim: which symbols are copies, and flipping a copy's first destination
// byte after the real driver has done it.
#pragma once

#include "tools/faults/fault_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuparity::shim {

using faults::symbol_id;

/// What the shim must know about a copy function to damage its destination.
struct copy_shape {
  bool copy = false;               ///< a copy the shim can corrupt
  bool device_destination = false; ///< HtoD, DtoD: the byte is changed through the driver
  bool async = false;              ///< the stream is synchronised before the byte is changed
  bool per_thread = false;         ///< _ptsz: stream 0 is the per-thread default stream
};

constexpr copy_shape copy_shape_of(symbol_id id) {
  using enum symbol_id;
  constexpr copy_shape to_device{true, true}, to_host{true, false};
  constexpr copy_shape to_device_async{true, true, true}, to_host_async{true, false, true};
  constexpr copy_shape to_device_ptsz{true, true, true, true},
      to_host_ptsz{true, false, true, true};
  switch (id) {
  case cuMemcpyHtoD:
  case cuMemcpyHtoD_v2:
  case cuMemcpyHtoD_v2_ptds:
  case cuMemcpyDtoD:
  case cuMemcpyDtoD_v2:
  case cuMemcpyDtoD_v2_ptds:
    return to_device;
  case cuMemcpyDtoH:
  case cuMemcpyDtoH_v2:
  case cuMemcpyDtoH_v2_ptds:
    return to_host;
  case cuMemcpyHtoDAsync:
  case cuMemcpyHtoDAsync_v2:
  case cuMemcpyDtoDAsync:
  case cuMemcpyDtoDAsync_v2:
    return to_device_async;
  case cuMemcpyDtoHAsync:
  case cuMemcpyDtoHAsync_v2:
    return to_host_async;
  case cuMemcpyHtoDAsync_v2_ptsz:
  case cuMemcpyDtoDAsync_v2_ptsz:
    return to_device_ptsz;
  case cuMemcpyDtoHAsync_v2_ptsz:
    return to_host_ptsz;
  default:
    return {};
  }
}

/// One finished copy call: its destination, size and stream.
struct copy_call {
  std::uintptr_t destination = 0;
  std::size_t bytes = 0;
  void *stream = nullptr; ///< CUstream of an async copy
  copy_shape shape;
};

/// Flips the first byte of the destination of a copy that succeeded: a host byte directly, a
/// device byte through the real driver's cuMemcpyDtoH_v2/cuMemcpyHtoD_v2, after synchronising
/// the stream of an async copy. A failure of those calls is reported once and otherwise ignored.
void corrupt_destination(const copy_call &call);

/// The support_check of CUPARITY_SHIM_FAULTS: "" for every fault but `corrupt` on a symbol that
/// is not a copy (the shim cannot know what other calls write).
[[nodiscard]] std::string corrupt_support(const faults::fault_spec &spec);

} // namespace cuparity::shim
