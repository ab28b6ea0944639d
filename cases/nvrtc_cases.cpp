// Suite `nvrtc`: run-time compilation to PTX and cubin, compile errors with their log, separate
// compilation linked by the driver (cuLink*, the seed's `link=[...]`) and by nvJitLink (LTO-IR),
// unresolved symbols, and NUMBA_CUDA_INCLUDE_PATH.
#include "cases/support.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/toolchain/nvjitlink.hpp"
#include "harness/toolchain/nvrtc.hpp"

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace cuparity::cases {
namespace {

// The kernel the suite compiles and runs: y[i] = a * x[i] + y[i].
const char *saxpy_source = R"(
extern "C" __global__ void cuparity_nvrtc_saxpy(float a, const float *x, float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// Separate compilation: the kernel calls a device function defined in another source, as the
// seed's cuda.jit(link=['functions.cu']) does.
const char *linked_kernel_source = R"(
extern "C" __device__ unsigned cuparity_ext_scale(unsigned x);
extern "C" __global__ void cuparity_nvrtc_linked(unsigned *out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cuparity_ext_scale(i);
}
)";
const char *functions_source = R"(
extern "C" __device__ unsigned cuparity_ext_scale(unsigned x) { return 3u * x + 7u; }
)";

std::string arch(case_context &ctx, const char *prefix) {
  int major = 0, minor = 0;
  ctx.drv().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
  ctx.drv().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
  return std::string(prefix) + std::to_string(major) + std::to_string(minor);
}

std::vector<std::string> base_options(case_context &ctx, const char *target_prefix) {
  return {"--gpu-architecture=" + arch(ctx, target_prefix),
          "-I" + ctx.config().requested.include_path};
}

/// "" when the library opens, else why not: the check of a declared facility.
template <class Library> std::string missing_library() {
  try {
    (void)Library::instance();
    return {};
  } catch (const std::exception &e) {
    return e.what();
  }
}

const facility_need needs_nvrtc{"NVRTC", missing_library<nvrtc>};
const facility_need needs_nvjitlink{"nvJitLink", missing_library<nvjitlink>};

/// NVRTC, which every case of this suite declares (needs_nvrtc): the check opened it already.
nvrtc &toolkit(case_context &) {
  return nvrtc::instance();
}

/// Runs saxpy from an image and checks y = 2x + 1 for x = i.
void run_saxpy(case_context &ctx, const void *image) {
  driver &d = ctx.drv();
  loaded_module m(d, image_bytes{image});
  constexpr unsigned n = 1000;
  std::vector<float> x(n), y(n, 1.0f);
  for (unsigned i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  device_buffer dx(d, n * 4), dy(d, n * 4);
  d.cuMemcpyHtoD(dx.get(), x.data(), n * 4);
  d.cuMemcpyHtoD(dy.get(), y.data(), n * 4);
  float a = 2.0f;
  unsigned count = n;
  launch(d, m.function("cuparity_nvrtc_saxpy"), {(n + 127) / 128}, {128}, 0, nullptr,
         {&a, dx.arg(), dy.arg(), &count});
  d.cuMemcpyDtoH(y.data(), dy.get(), n * 4);
  bool ok = true;
  for (unsigned i = 0; i < n; ++i)
    ok = ok && y[i] == 2.0f * static_cast<float>(i) + 1.0f;
  ctx.expect(ok, "saxpy compiled at run time computed wrong values");
  ctx.observe("checksum", checksum(y.data(), n * 4));
}

void compile_ptx(case_context &ctx) {
  primary_context pc(ctx.drv());
  auto out = toolkit(ctx).compile(saxpy_source, "saxpy.cu", base_options(ctx, "compute_"));
  ctx.expect(!out.ptx.empty(), "NVRTC gave no PTX");
  run_saxpy(ctx, out.ptx.data());
}

void compile_cubin(case_context &ctx) {
  primary_context pc(ctx.drv());
  auto out = toolkit(ctx).compile(saxpy_source, "saxpy.cu", base_options(ctx, "sm_"));
  ctx.expect(!out.cubin.empty(), "NVRTC gave no cubin for sm_XY");
  run_saxpy(ctx, out.cubin.data());
}

void compile_syntax_error(case_context &ctx) {
  primary_context pc(ctx.drv());
  const char *bad = "extern \"C\" __global__ void k(int *p) {\n  *p = 1;\n  this is not C++;\n}\n";
  try {
    (void)toolkit(ctx).compile(bad, "broken.cu", base_options(ctx, "compute_"));
    ctx.fail("a syntax error compiled");
  } catch (const toolchain_error &e) {
    const bool names_line = e.log().find("broken.cu(3)") != std::string::npos;
    ctx.observe("log_names_line_3", names_line);
    ctx.expect(names_line, "the log should point at broken.cu(3): " + e.log());
  }
}

/// Compiles a source with -rdc to PTX (for cuLink*) or LTO-IR (for nvJitLink).
std::vector<char> relocatable(case_context &ctx, const char *source, const char *name, bool lto) {
  auto opts = base_options(ctx, lto ? "sm_" : "compute_");
  opts.push_back("--relocatable-device-code=true");
  if (lto)
    opts.push_back("-dlto");
  auto out = toolkit(ctx).compile(source, name, opts);
  auto &bits = lto ? out.ltoir : out.ptx;
  ctx.expect(!bits.empty(),
             std::string("NVRTC gave no ") + (lto ? "LTO-IR" : "PTX") + " for " + name);
  return bits;
}

void run_linked(case_context &ctx, const void *image) {
  driver &d = ctx.drv();
  loaded_module m(d, image_bytes{image});
  constexpr unsigned n = 512;
  device_buffer out(d, n * 4);
  unsigned count = n;
  launch(d, m.function("cuparity_nvrtc_linked"), {n / 128}, {128}, 0, nullptr, {out.arg(), &count});
  std::vector<unsigned> host(n);
  d.cuMemcpyDtoH(host.data(), out.get(), n * 4);
  bool ok = true;
  for (unsigned i = 0; i < n; ++i)
    ok = ok && host[i] == 3u * i + 7u;
  ctx.expect(ok, "the linked kernel computed wrong values");
  ctx.observe("checksum", checksum(host.data(), n * 4));
}

/// The driver's linker: cuLinkCreate -> AddData(PTX) x2 -> Complete -> cuModuleLoadData before
/// cuLinkDestroy (the linker owns the cubin: docs/driver-facts.md#linker-owns-cubin).
struct link_attempt {
  CUresult result = CUDA_SUCCESS;
  std::string error_log;
};

/// Hands one PTX input to the linker from a file (cuLinkAddFile), as a package linking a user's
/// .ptx file does. The file is removed when the object goes.
struct ptx_file {
  std::string path;
  explicit ptx_file(const std::vector<char> &ptx) {
    static std::atomic<int> serial{0};
    path =
        (std::filesystem::temp_directory_path() /
         ("cuparity-link-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + ".ptx"))
            .string();
    std::ofstream(path, std::ios::binary)
        .write(ptx.data(), static_cast<std::streamsize>(std::strlen(ptx.data())));
  }
  ~ptx_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  ptx_file(const ptx_file &) = delete;
  ptx_file &operator=(const ptx_file &) = delete;
};

/// With `last_from_file`, the last input goes through cuLinkAddFile, the others cuLinkAddData.
link_attempt driver_link(case_context &ctx, const std::vector<std::vector<char>> &ptx,
                         void (*use)(case_context &, const void *), bool last_from_file = false) {
  driver &d = ctx.drv();
  std::vector<char> info(8192, 0), error(8192, 0);
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_LOG_VERBOSE};
  void *vals[] = {info.data(), reinterpret_cast<void *>(info.size()), error.data(),
                  reinterpret_cast<void *>(error.size()), reinterpret_cast<void *>(1)};
  CUlinkState state = nullptr;
  d.cuLinkCreate(5, opts, vals, &state);
  link_attempt a;
  int i = 0;
  for (const auto &p : ptx) {
    std::string name = "part" + std::to_string(i++) + ".ptx";
    if (last_from_file && i == static_cast<int>(ptx.size())) {
      const ptx_file file(p);
      a.result =
          d.cuLinkAddFile.raw(state, CU_JIT_INPUT_PTX, file.path.c_str(), 0, nullptr, nullptr);
    } else {
      a.result = d.cuLinkAddData.raw(state, CU_JIT_INPUT_PTX, const_cast<char *>(p.data()),
                                     p.size(), name.c_str(), 0, nullptr, nullptr);
    }
    if (a.result != CUDA_SUCCESS)
      break;
  }
  void *cubin = nullptr;
  std::size_t size = 0;
  if (a.result == CUDA_SUCCESS)
    a.result = d.cuLinkComplete.raw(state, &cubin, &size);
  a.error_log = error.data();
  if (a.result == CUDA_SUCCESS && use) {
    try {
      use(ctx, cubin);
    } catch (...) {
      (void)d.cuLinkDestroy.raw(state);
      throw;
    }
  }
  d.cuLinkDestroy(state);
  return a;
}

void link_driver(case_context &ctx) {
  primary_context pc(ctx.drv());
  auto a = relocatable(ctx, linked_kernel_source, "kernel.cu", false);
  auto b = relocatable(ctx, functions_source, "functions.cu", false);
  auto res = driver_link(ctx, {a, b}, run_linked, true); // functions.cu from a file
  ctx.expect(res.result == CUDA_SUCCESS,
             "cuLink* failed (" + std::to_string(res.result) + "): " + res.error_log);
}

void link_unresolved(case_context &ctx) {
  primary_context pc(ctx.drv());
  auto a = relocatable(ctx, linked_kernel_source, "kernel.cu", false);
  auto res = driver_link(ctx, {a}, nullptr);
  ctx.observe("link_result", static_cast<int>(res.result));
  const bool names_symbol = res.error_log.find("cuparity_ext_scale") != std::string::npos;
  ctx.observe("log_names_symbol", names_symbol);
  ctx.expect(res.result != CUDA_SUCCESS, "linking with an undefined function succeeded");
  ctx.expect(names_symbol, "the linker log should name cuparity_ext_scale: " + res.error_log);
}

void link_nvjitlink_lto(case_context &ctx) {
  primary_context pc(ctx.drv());
  auto a = relocatable(ctx, linked_kernel_source, "kernel.cu", true);
  auto b = relocatable(ctx, functions_source, "functions.cu", true);
  auto cubin = nvjitlink::instance().link({{nvjitlink::input::ltoir, a, "kernel.ltoir"},
                                           {nvjitlink::input::ltoir, b, "functions.ltoir"}},
                                          {"-arch=" + arch(ctx, "sm_"), "-lto"});
  run_linked(ctx, cubin.data());
}

/// NUMBA_CUDA_INCLUDE_PATH reaches NVRTC: with the right path cuda_fp16.h compiles; with a wrong
/// one the failure is clean and names the header. Which of the two happens is an observation of
/// the semantic group (the include path is part of its key).
void include_path(case_context &ctx) {
  primary_context pc(ctx.drv());
  const char *src = "#include <cuda_fp16.h>\n"
                    "extern \"C\" __global__ void cuparity_nvrtc_half(__half *p) {\n"
                    "  p[0] = __float2half(1.5f);\n}\n";
  try {
    auto out = toolkit(ctx).compile(src, "half.cu", base_options(ctx, "compute_"));
    ctx.observe("cuda_fp16_compiles", true);
    ctx.expect(!out.ptx.empty(), "no PTX for a source that compiled");
  } catch (const toolchain_error &e) {
    ctx.observe("cuda_fp16_compiles", false);
    ctx.expect(e.log().find("cuda_fp16.h") != std::string::npos,
               "a failed include should name the header: " + e.log());
  }
}

} // namespace

CUPARITY_CASE_FILE(register_nvrtc_cases) {
  // Every case compiles with NVRTC for the device's architecture (cuDeviceGetAttribute).
  const auto nvrtc_case = [&registry](case_def def) -> case_def & {
    return registry.add(std::move(def))
        .uses(primary_context_needs())
        .uses({E::cuDeviceGetAttribute})
        .needs_facility(needs_nvrtc);
  };
  // run_saxpy and run_linked: the image loaded, two buffers, copies and a launch.
  const std::vector<entry_need> run_needs{E::cuMemAlloc, E::cuMemFree, E::cuMemcpyHtoD,
                                          E::cuLaunchKernel, E::cuMemcpyDtoH};
  nvrtc_case({"nvrtc.compile.ptx", "NVRTC to PTX, loaded (JIT) and run", compile_ptx})
      .uses(module_needs())
      .uses(run_needs);
  nvrtc_case({"nvrtc.compile.cubin", "NVRTC to cubin for this GPU, loaded and run", compile_cubin})
      .uses(module_needs())
      .uses(run_needs);
  nvrtc_case({"nvrtc.compile.syntax_error", "a syntax error fails with a log naming the line",
              compile_syntax_error});
  const std::vector<entry_need> linker{E::cuLinkCreate, E::cuLinkAddData, E::cuLinkComplete,
                                       E::cuLinkDestroy};
  nvrtc_case({"nvrtc.link.driver",
              "kernel + functions.cu (-rdc) linked by cuLink* and run (the seed's link=[...])",
              link_driver})
      .uses(linker)
      .uses({E::cuLinkAddFile})
      .uses(module_needs())
      .uses(run_needs);
  nvrtc_case(
      {"nvrtc.link.nvjitlink_lto", "the same through LTO-IR with nvJitLink", link_nvjitlink_lto})
      .uses(module_needs())
      .uses(run_needs)
      .needs_facility(needs_nvjitlink);
  nvrtc_case({"nvrtc.link.unresolved", "an undefined device function: the linker log names it",
              link_unresolved})
      .uses(linker);
  nvrtc_case(
      {"nvrtc.include.path", "NUMBA_CUDA_INCLUDE_PATH reaches NVRTC (cuda_fp16.h)", include_path});
}

} // namespace cuparity::cases
