// The latency probes: each is one function whose calls go through the state's binder (facade, raw
// pointer or the other backend's pointer, block by block) and one registration line. Names follow
// cuda-python's benchmark cases where one exists, so figures can be set side by side
// (docs/latency.md).
#include "harness/framework/device_architecture.hpp"
#include "harness/probes/probe_registry.hpp"
#include "harness/toolchain/nvrtc.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

namespace cuparity::probes {
namespace {

CUfunction function(probe_env &e, const char *name) {
  CUfunction f = nullptr;
  e.drv.cuModuleGetFunction(&f, e.module, name);
  return f;
}

/// Launches per timed batch. cuLaunchKernel only enqueues: where the host enqueues faster than
/// the GPU retires empty kernels, an unbounded loop fills the stream's queue and then times the
/// GPU's drain rate, not the call. Each iteration therefore times a batch that fits the queue and
/// drains it untimed. (On the H200 VM the host is the slower side, ~3.4 us per launch, and batches
/// of 16 to 8192 read the same within the noise: reports/runs/2026-11-29-h200-cbd7362.)
constexpr int launch_batch = 64;

template <class Launch> void timed_batches(probe_state &s, probe_env &e, Launch launch_one) {
  for (auto _ : s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launch_batch; ++i)
      launch_one();
    const auto t1 = std::chrono::steady_clock::now();
    e.drv.cuStreamSynchronize(e.stream);
    s.set_iteration_time(std::chrono::duration<double>(t1 - t0).count());
  }
}

void launch_empty(probe_state &s, probe_env &e) {
  auto launch = s.bind(e.drv.cuLaunchKernel);
  CUfunction f = function(e, "cuparity_empty");
  timed_batches(s, e, [&] {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, static_cast<void **>(nullptr),
           static_cast<void **>(nullptr));
  });
}

void launch_args16(probe_state &s, probe_env &e) {
  auto launch = s.bind(e.drv.cuLaunchKernel);
  CUfunction f = function(e, "cuparity_args16");
  void *values[16] = {};
  void *params[16];
  for (int i = 0; i < 16; ++i)
    params[i] = &values[i];
  timed_batches(s, e, [&] {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, params, static_cast<void **>(nullptr));
  });
}

void launch_empty_sync(probe_state &s, probe_env &e) {
  auto launch = s.bind(e.drv.cuLaunchKernel);
  auto sync = s.bind(e.drv.cuStreamSynchronize);
  CUfunction f = function(e, "cuparity_empty");
  for (auto _ : s) {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, static_cast<void **>(nullptr),
           static_cast<void **>(nullptr));
    sync(e.stream);
  }
}

void stream_sync_idle(probe_state &s, probe_env &e) {
  auto sync = s.bind(e.drv.cuStreamSynchronize);
  for (auto _ : s)
    sync(e.stream);
}

void stream_query(probe_state &s, probe_env &e) {
  auto query = s.bind(e.drv.cuStreamQuery);
  for (auto _ : s)
    query(e.stream);
}

void event_record_sync(probe_state &s, probe_env &e) {
  CUevent ev = nullptr;
  e.drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  auto record = s.bind(e.drv.cuEventRecord);
  auto sync = s.bind(e.drv.cuEventSynchronize);
  for (auto _ : s) {
    record(ev, e.stream);
    sync(ev);
  }
  e.drv.cuEventDestroy(ev);
}

void ctx_get_current(probe_state &s, probe_env &e) {
  auto get = s.bind(e.drv.cuCtxGetCurrent);
  CUcontext c = nullptr;
  for (auto _ : s) {
    get(&c);
    keep(c);
  }
}

void ctx_push_pop(probe_state &s, probe_env &e) {
  auto push = s.bind(e.drv.cuCtxPushCurrent);
  auto pop = s.bind(e.drv.cuCtxPopCurrent);
  CUcontext c = nullptr;
  for (auto _ : s) {
    push(e.ctx);
    pop(&c);
  }
}

void mem_alloc_free_4k(probe_state &s, probe_env &e) {
  auto alloc = s.bind(e.drv.cuMemAlloc);
  auto release = s.bind(e.drv.cuMemFree);
  CUdeviceptr p = 0;
  for (auto _ : s) {
    alloc(&p, std::size_t{4096});
    release(p);
  }
}

void memcpy_htod_4b(probe_state &s, probe_env &e) {
  auto copy = s.bind(e.drv.cuMemcpyHtoD);
  CUdeviceptr p = 0;
  e.drv.cuMemAlloc(&p, 4);
  unsigned int value = 7;
  for (auto _ : s)
    copy(p, static_cast<const void *>(&value), std::size_t{4});
  e.drv.cuMemFree(p);
}

constexpr std::size_t big_copy = std::size_t{64} << 20;

/// Bandwidth of a 64 MiB pinned host-to-device copy, timed on the device with events.
void memcpy_htod_64mib(probe_state &s, probe_env &e) {
  auto copy = s.bind(e.drv.cuMemcpyHtoDAsync);
  void *host = nullptr;
  CUdeviceptr dev = 0;
  CUevent start = nullptr, stop = nullptr;
  e.drv.cuMemHostAlloc(&host, big_copy, 0);
  e.drv.cuMemAlloc(&dev, big_copy);
  e.drv.cuEventCreate(&start, CU_EVENT_DEFAULT);
  e.drv.cuEventCreate(&stop, CU_EVENT_DEFAULT);
  for (auto _ : s) {
    e.drv.cuEventRecord(start, e.stream);
    copy(dev, static_cast<const void *>(host), big_copy, e.stream);
    e.drv.cuEventRecord(stop, e.stream);
    e.drv.cuEventSynchronize(stop);
    float ms = 0;
    e.drv.cuEventElapsedTime(&ms, start, stop);
    s.set_iteration_time(ms / 1000.0);
  }
  e.drv.cuEventDestroy(start);
  e.drv.cuEventDestroy(stop);
  e.drv.cuMemFree(dev);
  e.drv.cuMemFreeHost(host);
}

void module_load_cubin(probe_state &s, probe_env &e) {
  auto load = s.bind(e.drv.cuModuleLoadData);
  auto unload = s.bind(e.drv.cuModuleUnload);
  const void *image = kernel_image_for_device("basic.cubin").data.data();
  CUmodule m = nullptr;
  for (auto _ : s) {
    load(&m, image);
    unload(m);
  }
}

/// NVRTC only (no driver call): the same in every cell unless something else loads the machine.
void nvrtc_compile_small(probe_state &s, probe_env &) {
  const std::string source = "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= 2; }\n";
  auto &compiler = nvrtc::instance();
  const std::string arch =
      "--gpu-architecture=compute_" + std::to_string(device_architecture().sm());
  for (auto _ : s) {
    auto out = compiler.compile(source, "small.cu", {arch});
    keep(out.ptx.data());
  }
}

/// No driver call: a fixed chain of dependent integer operations. It records how much the host's
/// own speed moved over a run's rounds, so a probe's CV can be read against it: on the H200 VM
/// even cuCtxGetCurrent, a pure-CPU path, ran 25-55 % slower for seconds at a time in a process
/// alone on the machine (reports/runs/2026-11-29-h200-cbd7362), a floor under every probe's
/// spread that no binding causes. Between backends it must read "same": a negative control.
void host_cpu_reference(probe_state &s, probe_env &) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto _ : s) {
    for (int i = 0; i < 256; ++i) { // xorshift64: each step needs the previous one
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    keep(x);
  }
}

} // namespace

CUPARITY_PROBE_FILE(register_probes) {
  registry.set_fixture_image("basic.cubin"); // the module of probe_env: cuparity_empty, args16
  registry.add("launch.empty_kernel", probe_kind::host, launch_empty).calls_per_iteration =
      launch_batch;
  registry.add("launch.args16", probe_kind::host, launch_args16).calls_per_iteration = launch_batch;
  registry.add("launch.empty_kernel_sync", probe_kind::host, launch_empty_sync);
  registry.add("stream.sync_idle", probe_kind::host, stream_sync_idle);
  registry.add("stream.query", probe_kind::host, stream_query);
  registry.add("event.record_sync", probe_kind::host, event_record_sync);
  registry.add("ctx.get_current", probe_kind::host, ctx_get_current);
  registry.add("ctx.push_pop", probe_kind::host, ctx_push_pop);
  registry.add("mem.alloc_free_4k", probe_kind::host, mem_alloc_free_4k);
  registry.add("memcpy.htod_4b", probe_kind::host, memcpy_htod_4b);
  registry.add("memcpy.htod_64mib", probe_kind::bandwidth, memcpy_htod_64mib).bytes_per_iteration =
      static_cast<double>(big_copy);
  registry.add("module.load_cubin", probe_kind::host, module_load_cubin);
  // No driver call: one series only (the state sees nothing bound).
  registry.add("nvrtc.compile_small", probe_kind::host, nvrtc_compile_small);
  registry.add("host.cpu_reference", probe_kind::host, host_cpu_reference);
}

} // namespace cuparity::probes
