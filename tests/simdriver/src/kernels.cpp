// CPU implementations of this project's kernels, keyed by their extern "C" names. Adding a kernel
// is one function plus one registry line; cases/kernels/*.cu must keep the same semantics.
#include "sim.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <thread>
#include <vector>

namespace cuparity::sim {
namespace {

template <class T> T arg(void *const *args, int i) {
  return *static_cast<T *>(args[i]);
}

void empty(const launch_dims &, void *const *) {}

// Occupies its stream for the given time: the worker sleeps, the caller does not.
void spin(const launch_dims &, void *const *args) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(arg<unsigned long long>(args, 0)));
}

// out[i] = i for every thread, where i is block-major, as cases/kernels/basic.cu computes it:
//   block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)
//   i = block * threads per block + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y *
//   threadIdx.z)
void write_index(const launch_dims &d, void *const *args) {
  auto *out = arg<unsigned int *>(args, 0);
  const std::uint64_t blocks = std::uint64_t{d.grid[0]} * d.grid[1] * d.grid[2];
  const std::uint64_t threads = std::uint64_t{d.block[0]} * d.block[1] * d.block[2];
  for (std::uint64_t b = 0; b < blocks; ++b)
    for (std::uint64_t t = 0; t < threads; ++t) {
      const std::uint64_t i = b * threads + t;
      out[i] = static_cast<unsigned int>(i);
    }
}

// out[i] = value for i < n (a grid-stride loop: the whole range, whatever the grid).
void fill_u32(const launch_dims &, void *const *args) {
  auto *out = arg<unsigned int *>(args, 0);
  const auto value = arg<unsigned int>(args, 1);
  const auto n = arg<unsigned long long>(args, 2);
  std::fill(out, out + n, value);
}

// Sixteen pointer arguments and no work: measures argument marshalling in launch probes.
void args16(const launch_dims &, void *const *) {}

// Sleeps like spin, then stores value at *flag: later work can tell whether it ran after.
void spin_write(const launch_dims &, void *const *args) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(arg<unsigned long long>(args, 0)));
  *arg<unsigned int *>(args, 1) = arg<unsigned int>(args, 2);
}

// Raises *raise, waits for *await, stores whether it came (basic.cu's meet). The flags live in
// shared memory that kernels on other stream workers touch at once. On a GPU the other kernel
// starts within microseconds when it can start at all; here it is a stream worker thread, which
// a two-core CI host running tests beside a whole matrix can leave unscheduled for longer than
// any fixed timeout (a chaos run once lost a per-thread cell's meeting that way). So the timeout
// counts only the time in which the process is stalled (host_stalled: the host waits and nothing
// else can run, i.e. the other kernel is held back by stream semantics), at least 100 ms of it;
// a host that never waits ends the wait after 30 s.
void meet(const launch_dims &, void *const *args) {
  using clock = std::chrono::steady_clock;
  auto *raise = arg<unsigned int *>(args, 0);
  auto *await = arg<unsigned int *>(args, 1);
  const auto timeout = std::max(std::chrono::nanoseconds(arg<unsigned long long>(args, 2)),
                                std::chrono::nanoseconds(std::chrono::milliseconds(100)));
  auto *saw = arg<unsigned int *>(args, 3);
  if (raise != nullptr)
    std::atomic_ref<unsigned int>(*raise).store(1);
  unsigned int seen = 0;
  if (await != nullptr) {
    const auto start = clock::now();
    auto last = start;
    clock::duration stalled{};
    std::atomic_ref<unsigned int> flag(*await);
    while ((seen = flag.load()) == 0 && stalled < timeout &&
           last - start < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      const auto now = clock::now();
      if (host_stalled())
        stalled += now - last;
      last = now;
    }
  }
  if (saw != nullptr)
    *saw = seen != 0 ? 1u : 0u;
}

void add_u32(const launch_dims &, void *const *args) {
  auto *data = arg<unsigned int *>(args, 0);
  const auto add = arg<unsigned int>(args, 1);
  const auto n = arg<unsigned long long>(args, 2);
  for (unsigned long long i = 0; i < n; ++i)
    data[i] += add;
}

void copy_u32(const launch_dims &, void *const *args) {
  auto *dst = arg<unsigned int *>(args, 0);
  const auto *src = arg<const unsigned int *>(args, 1);
  std::copy(src, src + arg<unsigned long long>(args, 2), dst);
}

// Every scalar parameter written back widened to 64 bits (floats as bit patterns).
void scalars(const launch_dims &, void *const *args) {
  auto *out = arg<unsigned long long *>(args, 11);
  out[0] = static_cast<unsigned long long>(static_cast<long long>(arg<signed char>(args, 0)));
  out[1] = arg<unsigned char>(args, 1);
  out[2] = static_cast<unsigned long long>(static_cast<long long>(arg<short>(args, 2)));
  out[3] = arg<unsigned short>(args, 3);
  out[4] = static_cast<unsigned long long>(static_cast<long long>(arg<int>(args, 4)));
  out[5] = arg<unsigned int>(args, 5);
  out[6] = static_cast<unsigned long long>(arg<long long>(args, 6));
  out[7] = arg<unsigned long long>(args, 7);
  out[8] = std::bit_cast<unsigned int>(arg<float>(args, 8));
  out[9] = std::bit_cast<unsigned long long>(arg<double>(args, 9));
  out[10] = reinterpret_cast<unsigned long long>(arg<const void *>(args, 10));
}

struct pair16 {
  unsigned long long a, b;
};
void struct16(const launch_dims &, void *const *args) {
  *arg<pair16 *>(args, 1) = arg<pair16>(args, 0);
}

// Dynamic shared memory written then read back reversed: out[i] = (words - 1 - i) * 3 + 1.
void dyn_shared(const launch_dims &d, void *const *args) {
  auto *out = arg<unsigned int *>(args, 0);
  const auto words = arg<unsigned int>(args, 1);
  std::vector<unsigned int> shared(d.shared_bytes / 4);
  for (unsigned int i = 0; i < words && i < shared.size(); ++i)
    shared[i] = i * 3u + 1u;
  for (unsigned int i = 0; i < words && i < shared.size(); ++i)
    out[i] = shared[words - 1 - i];
}

// The NVRTC suite's kernels (their sources are in cases/nvrtc_cases.cpp).
void nvrtc_saxpy(const launch_dims &d, void *const *args) {
  const float a = arg<float>(args, 0);
  const auto *x = arg<const float *>(args, 1);
  auto *y = arg<float *>(args, 2);
  const unsigned n = arg<unsigned>(args, 3);
  const std::uint64_t threads = std::uint64_t{d.grid[0]} * d.block[0];
  for (std::uint64_t i = 0; i < threads && i < n; ++i)
    y[i] = a * x[i] + y[i];
}

// cuparity_nvrtc_linked calls cuparity_ext_scale(x) = 3x + 7 from the linked functions.cu.
void nvrtc_linked(const launch_dims &d, void *const *args) {
  auto *out = arg<unsigned *>(args, 0);
  const unsigned n = arg<unsigned>(args, 1);
  const std::uint64_t threads = std::uint64_t{d.grid[0]} * d.block[0];
  for (std::uint64_t i = 0; i < threads && i < n; ++i)
    out[i] = 3u * static_cast<unsigned>(i) + 7u;
}

void nvrtc_half(const launch_dims &, void *const *args) {
  *arg<unsigned short *>(args, 0) = 0x3E00; // __float2half(1.5f)
}

} // namespace

const std::vector<kernel_desc> &kernel_registry() {
  static const std::vector<kernel_desc> registry = {
      // name, parameter sizes (natural alignment), CPU implementation, written pointer arg
      {"cuparity_empty", {}, &empty, -1},
      {"cuparity_spin", {8}, &spin, -1},
      {"cuparity_write_index", {8}, &write_index, 0},
      {"cuparity_fill_u32", {8, 4, 8}, &fill_u32, 0},
      {"cuparity_args16", std::vector<std::size_t>(16, 8), &args16, -1},
      {"cuparity_spin_write", {8, 8, 4}, &spin_write, 1},
      {"cuparity_meet", {8, 8, 8, 8}, &meet, 3},
      {"cuparity_add_u32", {8, 4, 8}, &add_u32, 0},
      {"cuparity_copy_u32", {8, 8, 8}, &copy_u32, 0},
      {"cuparity_scalars", {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 8}, &scalars, 11},
      {"cuparity_struct16", {16, 8}, &struct16, 1},
      {"cuparity_dyn_shared", {8, 4}, &dyn_shared, 0},
      {"cuparity_nvrtc_saxpy", {4, 8, 8, 4}, &nvrtc_saxpy, 2},
      {"cuparity_nvrtc_linked", {8, 4}, &nvrtc_linked, 0},
      {"cuparity_nvrtc_half", {8}, &nvrtc_half, 0},
  };
  return registry;
}

const kernel_desc *find_kernel(std::string_view name) {
  for (const kernel_desc &k : kernel_registry())
    if (name == k.name)
      return &k;
  return nullptr;
}

} // namespace cuparity::sim
