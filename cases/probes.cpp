// The latency probes: each is one function written against a call policy P (facade or direct
// pointer) and one registration line. Names follow cuda-python's benchmark cases where one exists,
// so figures can be set side by side (docs/latency.md).
#include "cases/kernels/kernel_images.hpp"
#include "harness/suite/probe_registry.hpp"
#include "harness/toolchain/nvrtc.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

namespace cuparity::probes {
namespace {

using state = benchmark::State;

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

template <class Launch> void timed_batches(state &s, probe_env &e, Launch launch_one) {
  for (auto _ : s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launch_batch; ++i)
      launch_one();
    const auto t1 = std::chrono::steady_clock::now();
    e.drv.cuStreamSynchronize(e.stream);
    s.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

template <class P> void launch_empty(state &s, probe_env &e, P) {
  auto launch = P::bind(e.drv.cuLaunchKernel);
  CUfunction f = function(e, "cuparity_empty");
  timed_batches(s, e, [&] {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, static_cast<void **>(nullptr),
           static_cast<void **>(nullptr));
  });
}

template <class P> void launch_args16(state &s, probe_env &e, P) {
  auto launch = P::bind(e.drv.cuLaunchKernel);
  CUfunction f = function(e, "cuparity_args16");
  void *values[16] = {};
  void *params[16];
  for (int i = 0; i < 16; ++i)
    params[i] = &values[i];
  timed_batches(s, e, [&] {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, params, static_cast<void **>(nullptr));
  });
}

template <class P> void launch_empty_sync(state &s, probe_env &e, P) {
  auto launch = P::bind(e.drv.cuLaunchKernel);
  auto sync = P::bind(e.drv.cuStreamSynchronize);
  CUfunction f = function(e, "cuparity_empty");
  for (auto _ : s) {
    launch(f, 1u, 1u, 1u, 1u, 1u, 1u, 0u, e.stream, static_cast<void **>(nullptr),
           static_cast<void **>(nullptr));
    sync(e.stream);
  }
}

template <class P> void stream_sync_idle(state &s, probe_env &e, P) {
  auto sync = P::bind(e.drv.cuStreamSynchronize);
  for (auto _ : s)
    sync(e.stream);
}

template <class P> void stream_query(state &s, probe_env &e, P) {
  auto query = P::bind(e.drv.cuStreamQuery);
  for (auto _ : s)
    query(e.stream);
}

template <class P> void event_record_sync(state &s, probe_env &e, P) {
  CUevent ev = nullptr;
  e.drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  auto record = P::bind(e.drv.cuEventRecord);
  auto sync = P::bind(e.drv.cuEventSynchronize);
  for (auto _ : s) {
    record(ev, e.stream);
    sync(ev);
  }
  e.drv.cuEventDestroy(ev);
}

template <class P> void ctx_get_current(state &s, probe_env &e, P) {
  auto get = P::bind(e.drv.cuCtxGetCurrent);
  CUcontext c = nullptr;
  for (auto _ : s) {
    get(&c);
    benchmark::DoNotOptimize(c);
  }
}

template <class P> void ctx_push_pop(state &s, probe_env &e, P) {
  auto push = P::bind(e.drv.cuCtxPushCurrent);
  auto pop = P::bind(e.drv.cuCtxPopCurrent);
  CUcontext c = nullptr;
  for (auto _ : s) {
    push(e.ctx);
    pop(&c);
  }
}

template <class P> void mem_alloc_free_4k(state &s, probe_env &e, P) {
  auto alloc = P::bind(e.drv.cuMemAlloc);
  auto release = P::bind(e.drv.cuMemFree);
  CUdeviceptr p = 0;
  for (auto _ : s) {
    alloc(&p, std::size_t{4096});
    release(p);
  }
}

template <class P> void memcpy_htod_4b(state &s, probe_env &e, P) {
  auto copy = P::bind(e.drv.cuMemcpyHtoD);
  CUdeviceptr p = 0;
  e.drv.cuMemAlloc(&p, 4);
  unsigned int value = 7;
  for (auto _ : s)
    copy(p, static_cast<const void *>(&value), std::size_t{4});
  e.drv.cuMemFree(p);
}

constexpr std::size_t big_copy = std::size_t{64} << 20;

/// Bandwidth of a 64 MiB pinned host-to-device copy, timed on the device with events.
template <class P> void memcpy_htod_64mib(state &s, probe_env &e, P) {
  auto copy = P::bind(e.drv.cuMemcpyHtoDAsync);
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
    s.SetIterationTime(ms / 1000.0);
  }
  e.drv.cuEventDestroy(start);
  e.drv.cuEventDestroy(stop);
  e.drv.cuMemFree(dev);
  e.drv.cuMemFreeHost(host);
}

template <class P> void module_load_cubin(state &s, probe_env &e, P) {
  auto load = P::bind(e.drv.cuModuleLoadData);
  auto unload = P::bind(e.drv.cuModuleUnload);
  const void *image = find_kernel_image("basic.cubin").data.data();
  CUmodule m = nullptr;
  for (auto _ : s) {
    load(&m, image);
    unload(m);
  }
}

/// NVRTC only (no driver call): the same in every cell unless something else loads the machine.
template <class P> void nvrtc_compile_small(state &s, probe_env &, P) {
  const std::string source = "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= 2; }\n";
  auto &compiler = nvrtc::instance();
  for (auto _ : s) {
    auto out = compiler.compile(source, "small.cu", {"--gpu-architecture=compute_90"});
    benchmark::DoNotOptimize(out.ptx.data());
  }
}

/// No driver call: a fixed chain of dependent integer operations. It records how much the host's
/// own speed moved over a run's rounds, so a probe's CV can be read against it: on the H200 VM
/// even cuCtxGetCurrent, a pure-CPU path, ran 25-55 % slower for seconds at a time in a process
/// alone on the machine (reports/runs/2026-11-29-h200-cbd7362), a floor under every probe's
/// spread that no binding causes. Between backends it must read "same": a negative control.
template <class P> void host_cpu_reference(state &s, probe_env &, P) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto _ : s) {
    for (int i = 0; i < 256; ++i) { // xorshift64: each step needs the previous one
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    benchmark::DoNotOptimize(x);
  }
}

} // namespace

/// A probe function template as the generic callable probe_registry::add instantiates once per
/// call policy (a template cannot be passed by its name alone).
#define CUPARITY_PROBE(fn) [](state &s, probe_env &e, auto policy) { fn(s, e, policy); }

CUPARITY_PROBE_FILE(register_probes) {
  registry.add("launch.empty_kernel", probe_kind::host, CUPARITY_PROBE(launch_empty))
      .calls_per_iteration = launch_batch;
  registry.add("launch.args16", probe_kind::host, CUPARITY_PROBE(launch_args16))
      .calls_per_iteration = launch_batch;
  registry.add("launch.empty_kernel_sync", probe_kind::host, CUPARITY_PROBE(launch_empty_sync));
  registry.add("stream.sync_idle", probe_kind::host, CUPARITY_PROBE(stream_sync_idle));
  registry.add("stream.query", probe_kind::host, CUPARITY_PROBE(stream_query));
  registry.add("event.record_sync", probe_kind::host, CUPARITY_PROBE(event_record_sync));
  registry.add("ctx.get_current", probe_kind::host, CUPARITY_PROBE(ctx_get_current));
  registry.add("ctx.push_pop", probe_kind::host, CUPARITY_PROBE(ctx_push_pop));
  registry.add("mem.alloc_free_4k", probe_kind::host, CUPARITY_PROBE(mem_alloc_free_4k));
  registry.add("memcpy.htod_4b", probe_kind::host, CUPARITY_PROBE(memcpy_htod_4b));
  registry.add("memcpy.htod_64mib", probe_kind::bandwidth, CUPARITY_PROBE(memcpy_htod_64mib))
      .bytes_per_iteration = static_cast<double>(big_copy);
  registry.add("module.load_cubin", probe_kind::host, CUPARITY_PROBE(module_load_cubin));
  // No driver call, so no direct series.
  registry.add("nvrtc.compile_small", probe_kind::host, CUPARITY_PROBE(nvrtc_compile_small), false);
  registry.add("host.cpu_reference", probe_kind::host, CUPARITY_PROBE(host_cpu_reference), false);
}

#undef CUPARITY_PROBE

} // namespace cuparity::probes
