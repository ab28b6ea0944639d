// Suite `launch`: modules from PTX, cubin and fatbin; parameters of every kind; grids; dynamic
// shared memory; launch errors; the `extra` buffer; function attributes and occupancy.
#include "cases/support.hpp"
#include "harness/framework/case_registry.hpp"

#include <bit>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace cuparity::cases {
namespace {

/// Launches cuparity_write_index over grid x block and returns the checksum, failing the case
/// if any element is not its own index.
std::uint64_t write_index(case_context &ctx, const loaded_module &m, dim3 grid, dim3 block) {
  driver &d = ctx.drv();
  const std::size_t n = std::size_t{grid.x} * grid.y * grid.z * block.x * block.y * block.z;
  device_buffer out(d, n * sizeof(unsigned int));
  set_words(d, out.get(), 0xFFFFFFFFu, n);
  launch(d, m.function("cuparity_write_index"), grid, block, 0, nullptr, {out.arg()});
  std::vector<unsigned int> host(n);
  d.cuMemcpyDtoH(host.data(), out.get(), n * sizeof(unsigned int));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    wrong += host[i] != i;
  ctx.expect(wrong == 0,
             std::to_string(wrong) + " of " + std::to_string(n) + " threads wrote the wrong index");
  return checksum(host.data(), n * sizeof(unsigned int));
}

void module_image(case_context &ctx, const char *image) {
  primary_context pc(ctx.drv());
  loaded_module m(ctx.drv(), image);
  ctx.observe("checksum", write_index(ctx, m, {64}, {128}));
}

/// PTX through cuModuleLoadDataEx with a JIT error log, as Numba loads it; the launch runs
/// between cuProfilerStart and cuProfilerStop (Numba's cuda.profile_start/stop), which succeed
/// with no profiler attached.
void module_ptx_jit(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  std::vector<char> log(4096, 0);
  loaded_module m(d, "basic.ptx", {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES},
                  {log.data(), reinterpret_cast<void *>(log.size())});
  ctx.expect(log[0] == '\0', "the JIT compiler logged an error: " + std::string(log.data()));
  d.cuProfilerStart();
  ctx.observe("checksum", write_index(ctx, m, {64}, {128}));
  d.cuProfilerStop();
}

void module_missing_function(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = nullptr;
  ctx.observe("missing_name",
              code_of([&] { return d.cuModuleGetFunction.raw(&f, m.get(), "cuparity_nope"); }));
  CUmodule bad = nullptr;
  const char junk[] = "this is not a module image";
  ctx.observe("junk_image", code_of([&] { return d.cuModuleLoadData.raw(&bad, junk); }));
}

void module_global(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUdeviceptr p = 0;
  std::size_t bytes = 0;
  d.cuModuleGetGlobal(&p, &bytes, m.get(), "cuparity_counter");
  ctx.observe("bytes", bytes);
  // cases/kernels/basic.cu declares it unsigned int[4]: the size is known, not only compared.
  ctx.expect(bytes == 4 * sizeof(unsigned int),
             "cuModuleGetGlobal sized cuparity_counter[4] as " + std::to_string(bytes) + " bytes");
  const unsigned int in[4] = {1, 22, 333, 4444};
  unsigned int out[4] = {};
  d.cuMemcpyHtoD(p, in, sizeof in);
  d.cuMemcpyDtoH(out, p, sizeof out);
  ctx.expect(std::memcmp(in, out, sizeof in) == 0, "a module global keeps what was written");
  ctx.observe("missing_global", code_of([&] {
                return d.cuModuleGetGlobal.raw(&p, &bytes, m.get(), "cuparity_no_such_global");
              }));
}

void params_scalars(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  signed char a = -100;
  unsigned char b = 200;
  short c = -30000;
  unsigned short e16 = 60000;
  int e = -2000000000;
  unsigned int f = 4000000000u;
  long long g = -9000000000000000000LL;
  unsigned long long h = 18000000000000000000ULL;
  float fl = 3.25f;
  double db = -1.0e300;
  device_buffer out(d, 11 * sizeof(unsigned long long));
  const void *k = reinterpret_cast<const void *>(out.get());
  launch(d, m.function("cuparity_scalars"), {1}, {1}, 0, nullptr,
         {&a, &b, &c, &e16, &e, &f, &g, &h, &fl, &db, &k, out.arg()});
  unsigned long long got[11] = {};
  d.cuMemcpyDtoH(got, out.get(), sizeof got);
  const unsigned long long want[11] = {static_cast<unsigned long long>(static_cast<long long>(a)),
                                       b,
                                       static_cast<unsigned long long>(static_cast<long long>(c)),
                                       e16,
                                       static_cast<unsigned long long>(static_cast<long long>(e)),
                                       f,
                                       static_cast<unsigned long long>(g),
                                       h,
                                       std::bit_cast<unsigned int>(fl),
                                       std::bit_cast<unsigned long long>(db),
                                       static_cast<unsigned long long>(out.get())};
  const char *names[11] = {"i8",  "u8",  "i16", "u16", "i32", "u32",
                           "i64", "u64", "f32", "f64", "ptr"};
  for (int i = 0; i < 11; ++i) {
    ctx.expect(got[i] == want[i], std::string("parameter ") + names[i] + " arrived as " +
                                      std::to_string(got[i]) + ", sent " + std::to_string(want[i]));
    if (i != 10) // the pointer differs per process; its correctness is checked above
      ctx.observe(std::string("value.") + names[i], std::to_string(got[i]));
  }
}

struct pair16 {
  unsigned long long a, b;
};

void params_struct16(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  pair16 s{0x0123456789ABCDEFULL, 0xFEDCBA9876543210ULL};
  device_buffer out(d, sizeof(pair16));
  launch(d, m.function("cuparity_struct16"), {1}, {1}, 0, nullptr, {&s, out.arg()});
  pair16 got{};
  d.cuMemcpyDtoH(&got, out.get(), sizeof got);
  ctx.expect(got.a == s.a && got.b == s.b, "a 16-byte struct passed by value arrives intact");
  ctx.observe("a", std::to_string(got.a));
  ctx.observe("b", std::to_string(got.b));
}

void grid_dims(case_context &ctx) {
  primary_context pc(ctx.drv());
  loaded_module m(ctx.drv(), "basic.cubin");
  ctx.observe("1d", write_index(ctx, m, {96}, {256}));
  ctx.observe("2d", write_index(ctx, m, {7, 9}, {16, 8}));
  ctx.observe("3d", write_index(ctx, m, {3, 5, 7}, {4, 4, 8}));
}

void shared_dynamic_optin(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = m.function("cuparity_dyn_shared");
  int optin = 0, static_limit = 0;
  d.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                         pc.device());
  d.cuDeviceGetAttribute(&static_limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                         pc.device());
  ctx.observe("optin_limit", optin);
  unsigned int words = static_cast<unsigned int>(optin) / 4;
  device_buffer out(d, std::size_t{words} * 4);
  // Above the default limit without opting in: refused.
  std::vector<void *> params{out.arg(), &words};
  ctx.observe("without_optin", code_of([&] {
                return d.cuLaunchKernel.raw(f, 1, 1, 1, 256, 1, 1, static_cast<unsigned>(optin),
                                            nullptr, params.data(), nullptr);
              }));
  d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  launch(d, f, {1}, {256}, static_cast<unsigned>(optin), nullptr, {out.arg(), &words});
  std::vector<unsigned int> host(words);
  d.cuMemcpyDtoH(host.data(), out.get(), std::size_t{words} * 4);
  std::size_t wrong = 0;
  for (unsigned int i = 0; i < words; ++i)
    wrong += host[i] != (words - 1 - i) * 3u + 1u;
  ctx.expect(wrong == 0, std::to_string(wrong) + " words of dynamic shared memory wrong");
  ctx.observe("above_optin", code_of([&] {
                return d.cuLaunchKernel.raw(f, 1, 1, 1, 256, 1, 1,
                                            static_cast<unsigned>(optin) + 1024, nullptr,
                                            params.data(), nullptr);
              }));
  (void)static_limit;
}

void errors_block_too_large(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = m.function("cuparity_empty");
  ctx.observe("block_2048", code_of([&] {
                return d.cuLaunchKernel.raw(f, 1, 1, 1, 2048, 1, 1, 0, nullptr, nullptr, nullptr);
              }));
  ctx.observe("block_z_128", code_of([&] {
                return d.cuLaunchKernel.raw(f, 1, 1, 1, 1, 1, 128, 0, nullptr, nullptr, nullptr);
              }));
  ctx.observe("grid_zero", code_of([&] {
                return d.cuLaunchKernel.raw(f, 0, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
              }));
  d.cuCtxSynchronize(); // errors of launch configuration are not sticky
}

void params_extra(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = m.function("cuparity_fill_u32");
  constexpr unsigned long long n = 4096;
  device_buffer a(d, n * 4), b(d, n * 4);
  unsigned int value = 0xC0FFEEu;
  unsigned long long count = n;
  launch(d, f, {16}, {256}, 0, nullptr, {a.arg(), &value, &count});
  // The same arguments packed into one buffer with natural alignment: ptr @0, u32 @8, u64 @16.
  alignas(8) unsigned char buffer[24] = {};
  CUdeviceptr bp = b.get();
  std::memcpy(buffer + 0, &bp, 8);
  std::memcpy(buffer + 8, &value, 4);
  std::memcpy(buffer + 16, &count, 8);
  std::size_t size = sizeof buffer;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  d.cuLaunchKernel(f, 16, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra);
  std::vector<unsigned int> ha(n), hb(n);
  d.cuMemcpyDtoH(ha.data(), a.get(), n * 4);
  d.cuMemcpyDtoH(hb.data(), b.get(), n * 4);
  ctx.expect(ha == hb && ha[0] == value && ha[n - 1] == value,
             "arguments through `extra` give the same result as kernelParams");
  ctx.observe("checksum", checksum(hb.data(), n * 4));
  void *params[] = {a.arg(), &value, &count};
  ctx.observe("both_params_and_extra", code_of([&] {
                return d.cuLaunchKernel.raw(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra);
              }));
}

void function_attributes(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = m.function("cuparity_write_index");
  const std::pair<const char *, CUfunction_attribute> attrs[] = {
      {"max_threads_per_block", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"shared_size_bytes", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
      {"const_size_bytes", CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
      {"local_size_bytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
      {"num_regs", CU_FUNC_ATTRIBUTE_NUM_REGS},
      {"ptx_version", CU_FUNC_ATTRIBUTE_PTX_VERSION},
      {"binary_version", CU_FUNC_ATTRIBUTE_BINARY_VERSION},
  };
  std::map<std::string, int> value;
  for (const auto &[name, attr] : attrs) {
    int v = -1;
    d.cuFuncGetAttribute(&v, attr, f);
    ctx.observe(name, v);
    value[name] = v;
  }
  // Facts the values must agree with, so a driver that reports them wrongly in every cell alike
  // still fails: the cubin is the one built for this device's architecture (basic.cubin), and no
  // function allows more threads per block than the device.
  int major = 0, minor = 0, device_max = 0;
  d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, pc.device());
  d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, pc.device());
  d.cuDeviceGetAttribute(&device_max, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, pc.device());
  ctx.expect(value["binary_version"] == major * 10 + minor,
             "binary_version " + std::to_string(value["binary_version"]) +
                 " is not the device's compute capability " + std::to_string(major * 10 + minor));
  ctx.expect(value["max_threads_per_block"] > 0 && value["max_threads_per_block"] <= device_max,
             "max_threads_per_block " + std::to_string(value["max_threads_per_block"]) +
                 " is outside 1.." + std::to_string(device_max));
  d.cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED);
}

/// Numba's ctypes prototypes for these got argument types wrong
/// (docs/driver-facts.md#numba-prototype-bugs); ours are static_asserted against cudaTypedefs.h,
/// so both backends must agree here.
void occupancy_queries(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  CUfunction f = m.function("cuparity_write_index");
  int blocks = 0;
  d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0);
  ctx.observe("active_blocks_256", blocks);
  ctx.expect(blocks > 0, "at least one block of 256 threads fits");
  int blocks_flags = 0;
  d.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks_flags, f, 256, 0,
                                                         CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE);
  ctx.observe("active_blocks_256_flags", blocks_flags);
  int min_grid = 0, block = 0;
  d.cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, nullptr, 0, 0);
  ctx.observe("potential_block", block);
  ctx.observe("potential_min_grid", min_grid);
  int min_grid2 = 0, block2 = 0;
  d.cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid2, &block2, f, nullptr, 0, 0,
                                              CU_OCCUPANCY_DEFAULT);
  ctx.expect(block2 == block && min_grid2 == min_grid, "WithFlags(DEFAULT) equals the plain query");
  // The queries answer one model: the smallest grid for full occupancy is the blocks that fit on
  // one multiprocessor at the suggested block size, times the multiprocessors (cuda_occupancy.h),
  // and without a caching preference the flag changes nothing.
  int at_block = 0, sms = 0;
  d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&at_block, f, block, 0);
  d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, pc.device());
  ctx.expect(min_grid == at_block * sms, "min grid " + std::to_string(min_grid) + " is not " +
                                             std::to_string(at_block) +
                                             " blocks per multiprocessor x " + std::to_string(sms));
  ctx.expect(blocks_flags == blocks, "DISABLE_CACHING_OVERRIDE changed the active blocks of a "
                                     "function without a caching preference");
}

void cooperative_basic(case_context &ctx) {
  driver &d = ctx.drv();
  primary_context pc(d);
  loaded_module m(d, "basic.cubin");
  constexpr unsigned int n = 8 * 128;
  device_buffer out(d, n * 4);
  void *params[] = {out.arg()};
  d.cuLaunchCooperativeKernel(m.function("cuparity_write_index"), 8, 1, 1, 128, 1, 1, 0, nullptr,
                              params);
  std::vector<unsigned int> host(n);
  d.cuMemcpyDtoH(host.data(), out.get(), n * 4);
  bool ok = true;
  for (unsigned int i = 0; i < n; ++i)
    ok = ok && host[i] == i;
  ctx.expect(ok, "a cooperative launch runs every block");
  ctx.observe("checksum", checksum(host.data(), n * 4));
}

} // namespace

CUPARITY_CASE_FILE(register_launch_cases) {
  // write_index: a module, a buffer zeroed by set_words, a launch and a copy back.
  const auto write_index_needs = [](case_def &c) -> case_def & {
    return c.uses(primary_context_needs())
        .uses(module_needs())
        .uses(buffer_needs())
        .uses({words_need(), E::cuLaunchKernel, E::cuMemcpyDtoH});
  };
  write_index_needs(registry.add({"launch.module.ptx",
                                  "module from PTX (JIT, cuModuleLoadDataEx with an error log) "
                                  "under cuProfilerStart/Stop, write_index checksum",
                                  module_ptx_jit}))
      .uses({E::cuModuleLoadDataEx, E::cuProfilerStart, E::cuProfilerStop});
  write_index_needs(registry.add({"launch.module.cubin", "module from cubin, write_index checksum",
                                  [](case_context &c) { module_image(c, "basic.cubin"); }}));
  write_index_needs(
      registry.add({"launch.module.fatbin", "module from fatbin, write_index checksum",
                    [](case_context &c) { module_image(c, "basic.fatbin"); }}));
  write_index_needs(registry.add(
      {"launch.grid.dims", "1D/2D/3D grids: each thread writes its index", grid_dims}));
  registry
      .add({"launch.module.missing_function", "unknown function name and junk image errors",
            module_missing_function})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses({E::cuModuleLoadData});
  registry
      .add({"launch.module.global", "cuModuleGetGlobal: size, read and write, missing name",
            module_global})
      .uses(primary_context_needs())
      .uses({entry_need{{E::cuModuleLoadData}, {E::cuModuleLoadDataEx}}, E::cuModuleUnload,
             E::cuModuleGetGlobal, E::cuMemcpyHtoD, E::cuMemcpyDtoH});
  for (auto [id, text, body] : {
           std::tuple{"launch.params.scalars", "every scalar type and a pointer arrive intact",
                      &params_scalars},
           std::tuple{"launch.params.struct16", "a 16-byte struct by value arrives intact",
                      &params_struct16},
           std::tuple{"launch.params.extra", "the `extra` buffer equals kernelParams",
                      &params_extra},
       })
    registry.add({id, text, body})
        .uses(primary_context_needs())
        .uses(module_needs())
        .uses(buffer_needs())
        .uses({E::cuLaunchKernel, E::cuMemcpyDtoH});
  registry
      .add({"launch.shared.dynamic_optin", "dynamic shared memory up to the opt-in limit",
            shared_dynamic_optin})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses({E::cuDeviceGetAttribute, E::cuFuncSetAttribute, E::cuLaunchKernel, E::cuMemcpyDtoH});
  registry
      .add({"launch.errors.block_too_large", "invalid launch configurations are refused",
            errors_block_too_large})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses({E::cuLaunchKernel, E::cuCtxSynchronize});
  registry.add({"launch.function.attributes", "cuFuncGetAttribute values", function_attributes})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses({E::cuFuncGetAttribute, E::cuFuncSetCacheConfig, E::cuDeviceGetAttribute});
  registry
      .add({"launch.occupancy.queries", "occupancy queries (Numba had their types wrong)",
            occupancy_queries})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses({E::cuOccupancyMaxActiveBlocksPerMultiprocessor,
             E::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
             E::cuOccupancyMaxPotentialBlockSize, E::cuOccupancyMaxPotentialBlockSizeWithFlags,
             E::cuDeviceGetAttribute});
  registry
      .add({"launch.cooperative.basic", "cooperative launch runs every block", cooperative_basic})
      .uses(primary_context_needs())
      .uses(module_needs())
      .uses(buffer_needs())
      .uses({E::cuLaunchCooperativeKernel, E::cuMemcpyDtoH})
      .needs_attribute(CUPARITY_ATTRIBUTE(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1));
}

} // namespace cuparity::cases
