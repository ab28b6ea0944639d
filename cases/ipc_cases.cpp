// Suite `ipc`: memory and event handles shared with a child process (fork+exec of this binary,
// never a bare fork: CUDA does not support a forked child without exec).
//
// cuIpcOpenMemHandle takes the 64-byte CUipcMemHandle *by value*. Numba's ctypes table typed it
// as an array, which ctypes passes as a pointer, and needed a C shim (_extras.c) to fix the ABI;
// our entry is static_asserted against PFN_cuIpcOpenMemHandle_v11000, so both backends pass it by
// value the same way.
#include "cases/support.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/framework/helper_registry.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace cuparity::cases {
namespace {

template <class Handle> std::string to_hex(const Handle &h) {
  static_assert(sizeof(Handle) == 64);
  const auto *b = reinterpret_cast<const unsigned char *>(&h);
  std::string s;
  char buf[3];
  for (std::size_t i = 0; i < sizeof(Handle); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
  }
  return s;
}

template <class Handle> bool from_hex(const std::string &s, Handle &h) {
  if (s.size() != 2 * sizeof(Handle))
    return false;
  auto *b = reinterpret_cast<unsigned char *>(&h);
  for (std::size_t i = 0; i < sizeof(Handle); ++i)
    b[i] = static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return true;
}

unsigned char pattern(std::size_t i, unsigned seed) {
  return static_cast<unsigned char>((i * 2654435761u + seed) >> 11);
}

/// Child: open a memory handle (on device `ordinal`), check `size` bytes at `offset` against
/// pattern `seed`, write pattern `seed + 1` there, close. Prints what it saw; exit 0 = all good.
int helper_mem_check_write(driver &d, const std::vector<std::string> &args, std::string &out) {
  if (args.size() != 5) {
    out += "usage: ipc.mem.check_write HANDLE OFFSET SIZE SEED ORDINAL\n";
    return 2;
  }
  CUipcMemHandle handle{};
  if (!from_hex(args[0], handle))
    return 2;
  const std::size_t offset = std::stoull(args[1]), size = std::stoull(args[2]);
  const unsigned seed = static_cast<unsigned>(std::stoul(args[3]));
  primary_context pc(d, std::stoi(args[4]));
  CUdeviceptr base = 0;
  d.cuIpcOpenMemHandle(&base, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  std::vector<unsigned char> host(size);
  d.cuMemcpyDtoH(host.data(), base + offset, size);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i)
    wrong += host[i] != pattern(offset + i, seed);
  for (std::size_t i = 0; i < size; ++i)
    host[i] = pattern(offset + i, seed + 1);
  d.cuMemcpyHtoD(base + offset, host.data(), size);
  d.cuCtxSynchronize();
  d.cuIpcCloseMemHandle(base);
  out += "wrong=" + std::to_string(wrong) + "\n";
  return wrong == 0 ? 0 : 1;
}

/// Child: open, close, open again; the data is the same both times.
int helper_mem_reopen(driver &d, const std::vector<std::string> &args, std::string &out) {
  CUipcMemHandle handle{};
  if (args.size() != 2 || !from_hex(args[0], handle))
    return 2;
  const std::size_t size = std::stoull(args[1]);
  primary_context pc(d);
  std::vector<unsigned char> first(size), second(size);
  CUdeviceptr p = 0;
  d.cuIpcOpenMemHandle(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  d.cuMemcpyDtoH(first.data(), p, size);
  d.cuIpcCloseMemHandle(p);
  d.cuIpcOpenMemHandle(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  d.cuMemcpyDtoH(second.data(), p, size);
  d.cuIpcCloseMemHandle(p);
  out += first == second ? "same=1\n" : "same=0\n";
  return first == second ? 0 : 1;
}

/// Child: open an event handle and a memory handle; wait for the event, then read the flag the
/// parent's kernel writes just before the event. Prints the value seen, then whether the event
/// was still pending when the wait began (only then does the wait prove anything).
int helper_event_wait(driver &d, const std::vector<std::string> &args, std::string &out) {
  CUipcEventHandle eh{};
  CUipcMemHandle mh{};
  if (args.size() != 2 || !from_hex(args[0], eh) || !from_hex(args[1], mh))
    return 2;
  primary_context pc(d);
  CUevent e = nullptr;
  d.cuIpcOpenEventHandle(&e, eh);
  CUdeviceptr flag = 0;
  d.cuIpcOpenMemHandle(&flag, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  const bool pending = d.cuEventQuery.raw(e) == CUDA_ERROR_NOT_READY;
  d.cuEventSynchronize(e);
  unsigned int seen = 0;
  d.cuMemcpyDtoH(&seen, flag, 4);
  d.cuIpcCloseMemHandle(flag);
  d.cuEventDestroy(e);
  out += "seen=" + std::to_string(seen) + "\n";
  out += pending ? "pending=1\n" : "pending=0\n";
  return 0;
}

/// Child: the staged path for devices without peer access (Numba's IpcHandle.open_staged): open
/// the handle in a context of the device that owns the memory, copy through the host into a
/// buffer on the target device, and check what the target device holds.
int helper_mem_staged(driver &d, const std::vector<std::string> &args, std::string &out) {
  CUipcMemHandle handle{};
  if (args.size() != 4 || !from_hex(args[0], handle))
    return 2;
  const std::size_t size = std::stoull(args[1]);
  const unsigned seed = static_cast<unsigned>(std::stoul(args[2]));
  std::vector<unsigned char> host(size);
  {
    primary_context source(d, 0);
    CUdeviceptr p = 0;
    // Same device, so no peer mapping is made; the flag is still required: the driver API docs
    // say it "must be specified", and driver 580 answers 0 with CUDA_ERROR_INVALID_VALUE.
    d.cuIpcOpenMemHandle(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    d.cuMemcpyDtoH(host.data(), p, size);
    d.cuIpcCloseMemHandle(p);
  }
  primary_context target(d, std::stoi(args[3]));
  device_buffer staged(d, size);
  d.cuMemcpyHtoD(staged.get(), host.data(), size);
  std::vector<unsigned char> back(size);
  d.cuMemcpyDtoH(back.data(), staged.get(), size);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i)
    wrong += back[i] != pattern(i, seed);
  out += "wrong=" + std::to_string(wrong) + "\n";
  return wrong == 0 ? 0 : 1;
}

CUPARITY_HELPER("ipc.mem.check_write", helper_mem_check_write);
CUPARITY_HELPER("ipc.mem.staged", helper_mem_staged);
CUPARITY_HELPER("ipc.mem.reopen", helper_mem_reopen);
CUPARITY_HELPER("ipc.event.wait", helper_event_wait);

constexpr auto helper_timeout = std::chrono::seconds(60);

/// Waits until what this process wrote to device memory has landed, before a child reads it. A
/// pageable cuMemcpyHtoD may return before its DMA to the device completes, and cuMemsetD* is
/// asynchronous to the host (driver API docs, "API synchronization behavior"). A helper process's
/// start (seconds) used to hide this; the cell's helper server answers within milliseconds, and on
/// the H200 ipc.mem.close_reopen then read the buffer before its memset (same=0 in 5 of 18 cells).
void ready_for_child(driver &d) {
  d.cuCtxSynchronize();
}

/// A device buffer filled with pattern `seed` and the IPC handle of its allocation.
struct exported_pattern {
  device_buffer buf;
  CUipcMemHandle handle{};
  exported_pattern(driver &d, std::size_t size, unsigned seed) : buf(d, size) {
    std::vector<unsigned char> host(size);
    for (std::size_t i = 0; i < size; ++i)
      host[i] = pattern(i, seed);
    d.cuMemcpyHtoD(buf.get(), host.data(), size);
    // Only the base of an allocation can be exported; an interior pointer travels as the base's
    // handle plus an offset.
    d.cuIpcGetMemHandle(&handle, buf.get());
    ready_for_child(d);
  }
};

/// Exports `size` bytes filled with pattern `seed`; a child checks them at `offset` and writes
/// pattern seed+1, which the parent then checks.
void share_and_check(case_context &ctx, std::size_t size, std::size_t offset, std::size_t span,
                     int child_device) {
  driver &d = ctx.drv();
  primary_context pc(d);
  const unsigned seed = 17;
  exported_pattern x(d, size, seed);
  auto res = ctx.spawn_helper("ipc.mem.check_write",
                              {to_hex(x.handle), std::to_string(offset), std::to_string(span),
                               std::to_string(seed), std::to_string(child_device)},
                              helper_timeout);
  ctx.expect(res.exited && res.exit_code == 0,
             "the child saw wrong data or failed (exit " + std::to_string(res.exit_code) +
                 ", signal " + std::to_string(res.signal) + "): " + res.out + res.err);
  std::vector<unsigned char> host(size);
  d.cuMemcpyDtoH(host.data(), x.buf.get(), size);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const bool written = i >= offset && i < offset + span;
    wrong += host[i] != pattern(i, written ? seed + 1 : seed);
  }
  ctx.expect(wrong == 0, std::to_string(wrong) + " bytes wrong after the child's writes");
  ctx.observe("child_output", res.out);
  ctx.observe("checksum", checksum(host.data(), size));
}

void mem_child_roundtrip(case_context &ctx) {
  share_and_check(ctx, 1 << 20, 0, 1 << 20, 0);
}

void mem_offset(case_context &ctx) {
  share_and_check(ctx, 1 << 20, 4096 + 64, 8192, 0);
}

void mem_open_in_exporter(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  device_buffer buf(d, 4096);
  CUipcMemHandle handle{};
  d.cuIpcGetMemHandle(&handle, buf.get());
  CUdeviceptr p = 0;
  // Driver 580 answers CUDA_ERROR_INVALID_CONTEXT; NVIDIA's docs name no code
  // (docs/driver-facts.md#ipc-open-in-exporter).
  ctx.observe("open_in_exporter", code_of([&] {
                return d.cuIpcOpenMemHandle.raw(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
              }));
  ctx.observe("get_interior",
              code_of([&] { return d.cuIpcGetMemHandle.raw(&handle, buf.get() + 256); }));
}

void mem_close_reopen(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  constexpr std::size_t size = 65536;
  device_buffer buf(d, size);
  d.cuMemsetD8(buf.get(), 0x5A, size);
  CUipcMemHandle handle{};
  d.cuIpcGetMemHandle(&handle, buf.get());
  ready_for_child(d);
  auto res =
      ctx.spawn_helper("ipc.mem.reopen", {to_hex(handle), std::to_string(size)}, helper_timeout);
  ctx.expect(res.exited && res.exit_code == 0,
             "close and reopen in the child: " + res.out + res.err);
  ctx.observe("child_output", res.out);
}

void event_cross_process(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  stream s(d, CU_STREAM_NON_BLOCKING);
  device_buffer flag(d, 4);
  set_words(d, flag.get(), 0, 1);
  // DISABLE_TIMING must accompany INTERPROCESS (driver API docs for cuEventCreate).
  event e(d, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING);
  CUipcEventHandle eh{};
  CUipcMemHandle mh{};
  d.cuIpcGetMemHandle(&mh, flag.get());
  // The child must begin its wait while the spin still runs, or it finds the work done and proves
  // nothing; it says whether it did. The helper server is started first (its start-up took
  // 2-6 s on an H200 under a full matrix), and the spin grows until the child meets it running:
  // most attempts need only the first, so the case no longer spins 2 s in every cell.
  const auto up = ctx.start_helper(helper_timeout);
  ctx.expect(up.exited && up.exit_code == 0, "the helper process did not start: " + up.err);
  const CUfunction spin_write = m.function("cuparity_spin_write");
  process_result res;
  for (unsigned long long ns : {250'000'000ULL, 1'000'000'000ULL, 4'000'000'000ULL}) {
    set_words(d, flag.get(), 0, 1);
    ready_for_child(d); // the memset is on stream 0, the kernel on a non-blocking stream
    unsigned int value = 7;
    launch(d, spin_write, {1}, {1}, 0, s.get(), {&ns, flag.arg(), &value});
    d.cuEventRecord(e.get(), s.get());
    d.cuIpcGetEventHandle(&eh, e.get());
    res = ctx.spawn_helper("ipc.event.wait", {to_hex(eh), to_hex(mh)}, helper_timeout);
    d.cuStreamSynchronize(s.get());
    ctx.expect(res.exited && res.exit_code == 0, "child failed: " + res.out + res.err);
    if (res.out.find("pending=1") != std::string::npos)
      break;
  }
  ctx.expect(res.out.find("pending=1") != std::string::npos,
             "the child began its wait after the exporter's work was done, even behind a 4 s spin");
  const std::string seen = res.out.substr(0, res.out.find('\n') + 1);
  ctx.observe("child_output", seen);
  ctx.expect(seen == "seen=7\n",
             "the child read the flag before the exporter's event completed: " + res.out);
}

/// Peer access from device 0's primary context to device 1's: enabled once, refused twice,
/// disabled once, refused twice; or refused as unsupported where the devices cannot be peers.
void peer_access(case_context &ctx, int can) {
  driver &d = ctx.drv();
  primary_context own(d, 0);
  CUdevice dev1 = 0;
  d.cuDeviceGet(&dev1, 1);
  CUcontext other = nullptr;
  d.cuDevicePrimaryCtxRetain(&other, dev1);
  const CUresult enable = d.cuCtxEnablePeerAccess.raw(other, 0);
  ctx.observe("enable_peer", static_cast<int>(enable));
  if (can) {
    ctx.expect(enable == CUDA_SUCCESS,
               "cuCtxEnablePeerAccess between peers: " + d.error_name(enable));
    ctx.observe("enable_twice", static_cast<int>(d.cuCtxEnablePeerAccess.raw(other, 0)));
    const CUresult disable = d.cuCtxDisablePeerAccess.raw(other);
    ctx.expect(disable == CUDA_SUCCESS, "cuCtxDisablePeerAccess: " + d.error_name(disable));
  } else {
    ctx.expect(enable == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
               "cuCtxEnablePeerAccess between devices that are no peers: " + d.error_name(enable));
  }
  ctx.observe("disable_not_enabled", static_cast<int>(d.cuCtxDisablePeerAccess.raw(other)));
  d.cuDevicePrimaryCtxRelease(dev1);
}

void mem_peer_device(case_context &ctx) {
  driver &d = ctx.drv();
  d.cuInit(0);
  int can = 0;
  d.cuDeviceCanAccessPeer(&can, 1, 0);
  ctx.observe("can_access_peer", can);
  ctx.expect(can == 0 || can == 1, "cuDeviceCanAccessPeer answered " + std::to_string(can));
  peer_access(ctx, can);
  // Exported on device 0, opened by a child whose context is on device 1.
  share_and_check(ctx, 1 << 20, 0, 1 << 20, 1);
}

void mem_staged(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  constexpr std::size_t size = 1 << 20;
  const unsigned seed = 29;
  exported_pattern x(d, size, seed);
  auto res = ctx.spawn_helper("ipc.mem.staged",
                              {to_hex(x.handle), std::to_string(size), std::to_string(seed), "1"},
                              helper_timeout);
  ctx.expect(res.exited && res.exit_code == 0,
             "the staged copy to device 1 is wrong or failed: " + res.out + res.err);
  ctx.observe("child_output", res.out);
}

} // namespace

/// Registers a case that sends requests to the cell's helper server, with what every IPC case
/// needs: the primary context, a buffer exported by cuIpcGetMemHandle, and unified addressing.
case_def &add_helper_case(case_registry &registry, case_def def, double cost_s) {
  case_def &c = registry.add(std::move(def));
  c.helper = true;
  c.cost_s = cost_s;
  // The helpers' own calls too: a binding without them cannot run the case's second half.
  return c.uses(primary_context_needs())
      .uses(buffer_needs())
      .uses({E::cuIpcGetMemHandle, E::cuIpcOpenMemHandle, E::cuIpcCloseMemHandle, E::cuMemcpyHtoD,
             E::cuMemcpyDtoH, E::cuCtxSynchronize})
      .needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1));
}

CUPARITY_CASE_FILE(register_ipc_cases) {
  // A helper request costs about a second under a full matrix (the first waits for the server).
  // ready_for_child() is cuCtxSynchronize.
  add_helper_case(registry,
                  {"ipc.mem.child_roundtrip",
                   "a child opens a memory handle, checks the pattern, writes a new one back",
                   mem_child_roundtrip},
                  1.0)
      .uses({E::cuMemcpyHtoD, E::cuCtxSynchronize, E::cuMemcpyDtoH});
  add_helper_case(
      registry,
      {"ipc.mem.offset", "an interior pointer shared as base handle plus offset", mem_offset}, 1.0)
      .uses({E::cuMemcpyHtoD, E::cuCtxSynchronize, E::cuMemcpyDtoH});
  registry
      .add({"ipc.mem.open_in_exporter",
            "opening a handle in its exporting process; exporting an interior pointer",
            mem_open_in_exporter})
      .uses(primary_context_needs())
      .uses(buffer_needs())
      .uses({E::cuIpcGetMemHandle, E::cuIpcOpenMemHandle})
      .needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1));
  add_helper_case(
      registry,
      {"ipc.mem.close_reopen", "close and reopen a handle in the child", mem_close_reopen}, 1.0)
      .uses({E::cuMemsetD8, E::cuCtxSynchronize});
  add_helper_case(registry,
                  {"ipc.event.cross_process",
                   "a child waits on the exporter's IPC event before reading its data",
                   event_cross_process},
                  1.0)
      .uses(module_needs())
      .uses(stream_needs())
      .uses(event_needs())
      .uses({words_need(), E::cuCtxSynchronize, E::cuLaunchKernel, E::cuEventRecord,
             E::cuIpcGetEventHandle, E::cuStreamSynchronize, E::cuIpcOpenEventHandle,
             E::cuEventQuery, E::cuEventSynchronize})
      .needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 1));
  // Two devices, checked before any request.
  add_helper_case(registry,
                  {"ipc.mem.staged",
                   "a handle opened on its own device and staged through the host to device 1",
                   mem_staged},
                  0.05)
      .uses({E::cuMemcpyHtoD, E::cuCtxSynchronize})
      .needs_devices(2);
  add_helper_case(registry,
                  {"ipc.mem.peer_device",
                   "a handle of device-0 memory opened on device 1 (lazy peer access)",
                   mem_peer_device},
                  0.05)
      .uses({E::cuDeviceCanAccessPeer, E::cuCtxEnablePeerAccess, E::cuCtxDisablePeerAccess,
             E::cuMemcpyHtoD, E::cuCtxSynchronize, E::cuMemcpyDtoH})
      .needs_devices(2);
}

} // namespace cuparity::cases
