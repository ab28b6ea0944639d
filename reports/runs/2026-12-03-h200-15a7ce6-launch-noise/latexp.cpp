// Experiment: per-launch timing of cuLaunchKernel through the fault shim's dlsym and proc
// pointers, interleaved in blocks (Williams order over 3 series: 0 dlsym, 1 proc, 2 dlsym again),
// with several per-block statistics, to choose a paired estimator offline.
#include <cuda.h>
#include <dlfcn.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
static std::chrono::steady_clock::time_point start_all() { static auto t = std::chrono::steady_clock::now(); return t; }

using launch_t = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
template <class T> T sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    std::fprintf(stderr, "no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<T>(p);
}
#define CHECK(x)                                                                                   \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      std::fprintf(stderr, "%s -> %d\n", #x, (int)r_);                                             \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: latexp LIB CUBIN SECONDS OUT ptds batches busy_ns\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  const double seconds = std::atof(argv[3]);
  const bool ptds = argc > 5 && std::atoi(argv[5]) != 0;
  const int batches = argc > 6 ? std::atoi(argv[6]) : 2;
  unsigned long long busy_ns = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 0;
  auto memalloc = sym<CUresult (*)(CUdeviceptr *, size_t)>(lib, "cuMemAlloc_v2");
  auto memsetd32 = sym<CUresult (*)(CUdeviceptr, unsigned, size_t)>(lib, "cuMemsetD32_v2");
  auto init = sym<CUresult (*)(unsigned)>(lib, "cuInit");
  auto devget = sym<CUresult (*)(CUdevice *, int)>(lib, "cuDeviceGet");
  auto retain = sym<CUresult (*)(CUcontext *, CUdevice)>(lib, "cuDevicePrimaryCtxRetain");
  auto setcur = sym<CUresult (*)(CUcontext)>(lib, "cuCtxSetCurrent");
  auto modload = sym<CUresult (*)(CUmodule *, const void *)>(lib, "cuModuleLoadData");
  auto getfn = sym<CUresult (*)(CUfunction *, CUmodule, const char *)>(lib, "cuModuleGetFunction");
  auto screate = sym<CUresult (*)(CUstream *, unsigned)>(lib, "cuStreamCreate");
  const char *lname = ptds ? "cuLaunchKernel_ptsz" : "cuLaunchKernel";
  const char *sname = ptds ? "cuStreamSynchronize_ptsz" : "cuStreamSynchronize";
  auto ssync = sym<CUresult (*)(CUstream)>(lib, sname);
  auto via_dlsym = sym<launch_t>(lib, lname);
  auto gpa = sym<CUresult (*)(const char *, void **, int, cuuint64_t,
                              CUdriverProcAddressQueryResult *)>(lib, "cuGetProcAddress_v2");
  CHECK(init(0));
  CUdevice dev;
  CHECK(devget(&dev, 0));
  CUcontext ctx;
  CHECK(retain(&ctx, dev));
  CHECK(setcur(ctx));
  void *pp = nullptr;
  CUdriverProcAddressQueryResult q;
  CHECK(gpa("cuLaunchKernel", &pp, 13000,
            ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM,
            &q));
  auto via_proc = reinterpret_cast<launch_t>(pp);
  std::fprintf(stderr, "dlsym %p proc %p\n", (void *)via_dlsym, pp);
  CUmodule mod;
  std::vector<char> image;
  {
    FILE *fi = std::fopen(argv[2], "rb");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fi)) > 0)
      image.insert(image.end(), buf, buf + n);
    std::fclose(fi);
  }
  CHECK(modload(&mod, image.data()));
  CUfunction f, meetf;
  CHECK(getfn(&f, mod, "cuparity_empty"));
  CHECK(getfn(&meetf, mod, "cuparity_meet"));
  CUdeviceptr zero_word = 0;
  CHECK(memalloc(&zero_word, 64));
  CHECK(memsetd32(zero_word, 0, 16));
  CUstream st;
  CHECK(screate(&st, 0));
  const launch_t ptrs[3] = {via_dlsym, via_proc, via_dlsym};
  // tsc rate
  auto c0 = __rdtsc();
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
  }
  const double ticks_per_ns =
      double(__rdtsc() - c0) /
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  (void)start_all();
  const int orders[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
  constexpr int batch = 64;
  FILE *out = std::fopen(argv[4], "w");
  std::fprintf(out, "# ticks_per_ns %.6f dlsym %p proc %p ptds %d batches %d busy %llu\n", ticks_per_ns,
               (void *)via_dlsym, pp, ptds ? 1 : 0, batches, busy_ns);
  std::vector<unsigned> samples(batch * batches);
  if (argc > 8 && std::string(argv[8]) == "ctxlaunch") {
    using get_t = CUresult (*)(CUcontext *);
    auto get_dlsym = sym<get_t>(lib, "cuCtxGetCurrent");
    void *gp = nullptr;
    CHECK(gpa("cuCtxGetCurrent", &gp, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    const get_t gets[3] = {get_dlsym, reinterpret_cast<get_t>(gp), get_dlsym};
    auto ctx_phase = [&](const char *tag, double secs) {
      const auto t0 = std::chrono::steady_clock::now();
      long tr = 0;
      CUcontext c;
      while (std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(secs)) {
        const int *order = orders[tr % 6];
        unsigned long long v[3];
        for (int pos = 0; pos < 3; ++pos) {
          const int s3 = order[pos];
          volatile get_t fn = gets[s3];
          const unsigned long long a = __rdtsc();
          for (int i = 0; i < 2000; ++i)
            fn(&c);
          v[s3] = __rdtsc() - a;
        }
        std::fprintf(out, "%s %ld %llu %llu %llu\n", tag, tr++, v[0], v[1], v[2]);
      }
    };
    ctx_phase("ctxA", 1.0);
    const auto t0 = std::chrono::steady_clock::now();
    long tr = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(seconds)) {
      const int *order = orders[tr % 6];
      unsigned long long v[3];
      for (int pos = 0; pos < 3; ++pos) {
        const int s3 = order[pos];
        volatile launch_t fn = ptrs[s3];
        unsigned long long total = 0;
        for (int b = 0; b < 2; ++b) {
          const unsigned long long a = __rdtsc();
          for (int i = 0; i < 64; ++i)
            fn(f, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr);
          total += __rdtsc() - a;
          ssync(st);
        }
        v[s3] = total;
      }
      std::fprintf(out, "launch %ld %llu %llu %llu\n", tr++, v[0], v[1], v[2]);
    }
    ctx_phase("ctxB", 1.0);
    std::fclose(out);
    return 0;
  }
  if (argc > 8 && std::string(argv[8]) == "inter") {
    // per-launch interleaving: launch i of a batch uses orders[(k/3)%6][k%3], k counting launches
    constexpr int per = 66;
    long k = 0, nb = 0;
    std::vector<unsigned> ts[3];
    while (std::chrono::steady_clock::now() - start_all() < std::chrono::duration<double>(seconds)) {
      for (auto &t : ts) t.clear();
      unsigned long long sums[3] = {0, 0, 0};
      unsigned long long prev = __rdtsc();
      for (int i = 0; i < per; ++i, ++k) {
        const int s3 = orders[(k / 3) % 6][k % 3];
        volatile launch_t fn = ptrs[s3];
        fn(f, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr);
        const unsigned long long now = __rdtsc();
        sums[s3] += now - prev;
        ts[s3].push_back(unsigned(now - prev));
        prev = now;
      }
      ssync(st);
      std::fprintf(out, "%ld", nb++);
      for (int s3 = 0; s3 < 3; ++s3) {
        std::sort(ts[s3].begin(), ts[s3].end());
        std::fprintf(out, " %llu %u", sums[s3], ts[s3][ts[s3].size() / 2]);
      }
      std::fprintf(out, "\n");
    }
    std::fclose(out);
    std::fprintf(stderr, "batches %ld\n", nb);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  long triple = 0;
  // warm
  for (int i = 0; i < 1000; ++i)
    ptrs[0](f, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr);
  ssync(st);
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
    const int *order = orders[triple % 6];
    for (int pos = 0; pos < 3; ++pos) {
      const int s = order[pos];
      volatile launch_t fn = ptrs[s];
      unsigned long long total = 0;
      for (int b = 0; b < batches; ++b) {
        if (busy_ns) {
          void *none = nullptr;
          void *args[4] = {&none, &zero_word, &busy_ns, &none};
          CHECK(ptrs[0](meetf, 1, 1, 1, 1, 1, 1, 0, st, args, nullptr));
        }
        const unsigned long long bt0 = __rdtsc();
        unsigned long long prev = bt0;
        for (int i = 0; i < batch; ++i) {
          fn(f, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr);
          const unsigned long long now = __rdtsc();
          samples[b * batch + i] = unsigned(now - prev);
          prev = now;
        }
        total += prev - bt0;
        ssync(st);
      }
      std::vector<unsigned> v = samples;
      std::sort(v.begin(), v.end());
      const int n = int(v.size());
      unsigned long long iq = 0, low75 = 0, trim10 = 0;
      for (int i = n / 4; i < 3 * n / 4; ++i)
        iq += v[i];
      for (int i = 0; i < 3 * n / 4; ++i)
        low75 += v[i];
      for (int i = n / 10; i < n - n / 10; ++i)
        trim10 += v[i];
      std::fprintf(out, "%ld %d %d %llu %u %llu %llu %llu %u %u %u\n", triple, pos, s, total,
                   v[n / 2], iq, low75, trim10, v[n / 10], v[0], v[n - 1]);
    }
    ++triple;
  }
  std::fclose(out);
  std::fprintf(stderr, "triples %ld\n", triple);
  return 0;
}
