// Device code for the case suites and probes; built into PTX, cubin and fatbin and embedded.
//
// Every kernel is extern "C" so its name is stable across PTX/cubin/fatbin and the simulated
// driver can map it to a CPU version (tests/simdriver keeps those, keyed by these names).
#include <cstdint>

// Global timer in nanoseconds: %globaltimer, the only clock that means wall time on the device.
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// A module global: cases find it with cuModuleGetGlobal and read and write it by address. A
/// definition inside a linkage block, not an `extern "C"` declaration: without relocatable device
/// code nvcc treats such a declaration as a static definition and warns (#20044-D) once per
/// architecture, 36 times a build.
extern "C" {
__device__ unsigned int cuparity_counter[4];
}

extern "C" __global__ void cuparity_empty() {}

/// Occupies its stream for `ns` nanoseconds (one thread is enough).
extern "C" __global__ void cuparity_spin(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

/// Spins for `ns`, then stores `value` at *flag: later work can tell whether it ran after.
extern "C" __global__ void cuparity_spin_write(unsigned long long ns, unsigned int *flag,
                                               unsigned int value) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  *flag = value;
  __threadfence_system();
}

/// Raises *raise (when not null), then waits up to `timeout_ns` for *await to be raised and stores
/// in *saw whether it was. Two of them that run at the same time both see each other; of two that
/// run one after the other, the first never sees the second, however loaded the host is. That
/// makes ordering between streams an observation that cannot flip with timing.
extern "C" __global__ void cuparity_meet(unsigned int *raise, const unsigned int *await,
                                         unsigned long long timeout_ns, unsigned int *saw) {
  if (raise != nullptr) {
    atomicExch(raise, 1u);
    __threadfence_system();
  }
  unsigned int seen = 0;
  if (await != nullptr) {
    const volatile unsigned int *flag = await;
    const unsigned long long start = global_ns();
    while ((seen = *flag) == 0 && global_ns() - start < timeout_ns) {
    }
  }
  if (saw != nullptr)
    *saw = seen != 0 ? 1u : 0u;
}

/// Every thread writes its linear index: block-major (block linear id * threads per block +
/// thread linear id), with x fastest in both.
extern "C" __global__ void cuparity_write_index(unsigned int *out) {
  const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned int i = block * threads + thread;
  out[i] = i;
}

extern "C" __global__ void cuparity_fill_u32(unsigned int *out, unsigned int value,
                                             unsigned long long n) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = value;
}

/// data[i] += add: applied in stream order, it shows ordering and counts executions.
extern "C" __global__ void cuparity_add_u32(unsigned int *data, unsigned int add,
                                            unsigned long long n) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    data[i] += add;
}

extern "C" __global__ void cuparity_copy_u32(unsigned int *dst, const unsigned int *src,
                                             unsigned long long n) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

/// 16 pointer parameters, no work: the cuda-python benchmarks' launch_16_args shape.
extern "C" __global__ void cuparity_args16(void *, void *, void *, void *, void *, void *, void *,
                                           void *, void *, void *, void *, void *, void *, void *,
                                           void *, void *) {}

/// Writes every scalar parameter back, widened to 64 bits (floats as their bit patterns), so
/// the host can check each one arrived intact.
extern "C" __global__ void cuparity_scalars(signed char a, unsigned char b, short c,
                                            unsigned short d, int e, unsigned int f, long long g,
                                            unsigned long long h, float i, double j, const void *k,
                                            unsigned long long *out) {
  out[0] = (unsigned long long)(long long)a;
  out[1] = b;
  out[2] = (unsigned long long)(long long)c;
  out[3] = d;
  out[4] = (unsigned long long)(long long)e;
  out[5] = f;
  out[6] = (unsigned long long)g;
  out[7] = h;
  out[8] = __float_as_uint(i);
  out[9] = (unsigned long long)__double_as_longlong(j);
  out[10] = (unsigned long long)k;
}

struct pair16 {
  unsigned long long a, b;
};

/// A 16-byte struct by value: copied back as received.
extern "C" __global__ void cuparity_struct16(pair16 s, pair16 *out) {
  *out = s;
}

/// Uses `words` 32-bit words of dynamic shared memory: fills it, then writes it back reversed,
/// so the result is only right if all of it was really there.
extern "C" __global__ void cuparity_dyn_shared(unsigned int *out, unsigned int words) {
  extern __shared__ unsigned int buffer[];
  for (unsigned int i = threadIdx.x; i < words; i += blockDim.x)
    buffer[i] = i * 3u + 1u;
  __syncthreads();
  for (unsigned int i = threadIdx.x; i < words; i += blockDim.x)
    out[i] = buffer[words - 1 - i];
}
