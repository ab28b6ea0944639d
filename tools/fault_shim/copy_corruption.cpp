// Flips the first destination byte of a finished copy, through the real driver where it lives
// on the device.
#include "tools/fault_shim/copy_corruption.hpp"

#include "tools/fault_shim/shim_state.hpp"
#include "tools/faults/driver_declarations.hpp"

#include <atomic>

namespace cuparity::shim {

namespace {

template <class Fn> Fn *real_function(symbol_id id) {
  return reinterpret_cast<Fn *>(state().real[faults::index_of(id)]);
}

void report_once(const std::string &what) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true))
    report("warning", "corrupt: " + what +
                          "; the destination was left as the copy wrote it "
                          "(reported once)");
}

// The real synchronisation matching the copy's meaning of stream 0.
bool synchronize(const copy_call &call) {
  using sync_fn = decltype(::cuStreamSynchronize);
  auto *sync = real_function<sync_fn>(call.shape.per_thread ? symbol_id::cuStreamSynchronize_ptsz
                                                            : symbol_id::cuStreamSynchronize);
  return sync != nullptr && sync(static_cast<CUstream>(call.stream)) == CUDA_SUCCESS;
}

// Read, flip and write one device byte with the driver's own legacy-stream copies: they start
// after the copy that wrote it (already finished or synchronised). A pageable cuMemcpyHtoD may
// return before its DMA lands (driver API docs, "API synchronization behavior"), so the context
// is synchronised after it: on the H200 a read on a non-blocking stream right after the copy saw
// the byte unflipped (cuMemcpyHtoDAsync_v2:corrupt went uncaught).
bool flip_device_byte(CUdeviceptr where) {
  auto *dtoh = real_function<decltype(::cuMemcpyDtoH_v2)>(symbol_id::cuMemcpyDtoH_v2);
  auto *htod = real_function<decltype(::cuMemcpyHtoD_v2)>(symbol_id::cuMemcpyHtoD_v2);
  auto *sync = real_function<decltype(::cuCtxSynchronize)>(symbol_id::cuCtxSynchronize);
  unsigned char byte = 0;
  if (dtoh == nullptr || htod == nullptr || sync == nullptr ||
      dtoh(&byte, where, 1) != CUDA_SUCCESS)
    return false;
  byte ^= 0xFFu;
  return htod(where, &byte, 1) == CUDA_SUCCESS && sync() == CUDA_SUCCESS;
}

} // namespace

void corrupt_destination(const copy_call &call) {
  if (call.bytes == 0 || call.destination == 0)
    return;
  if (call.shape.async && !synchronize(call)) {
    report_once("cannot synchronise the stream of an async copy");
    return;
  }
  if (!call.shape.device_destination) {
    *reinterpret_cast<unsigned char *>(call.destination) ^= 0xFFu;
    return;
  }
  if (!flip_device_byte(static_cast<CUdeviceptr>(call.destination)))
    report_once("the driver refused the one-byte copies that change a device byte");
}

std::string corrupt_support(const faults::fault_spec &spec) {
  if (spec.kind != faults::fault_kind::corrupt || copy_shape_of(spec.symbol).copy)
    return {};
  return "corrupt is not supported on " + std::string(faults::symbol_name(spec.symbol)) +
         " by the fault shim (only on the cuMemcpy{HtoD,DtoH,DtoD}[Async] copies, whose "
         "destination it can flip)";
}

} // namespace cuparity::shim
