// Modules, functions and launches: a loaded image's kernel names map to CPU implementations
// (kernels.cpp), __device__ variables get zeroed storage, and launches run in stream order.
#include "api.hpp"

#include <cstring>
#include <sys/mman.h>

namespace cuparity::sim {

namespace {

struct module_state {
  context *ctx = nullptr;
  image_symbols symbols;
  std::map<std::string, std::shared_ptr<function_state>, std::less<>> functions;
  std::map<std::string, std::uintptr_t, std::less<>> globals;
};

struct module_registry {
  std::mutex mu;
  std::unordered_map<module_state *, std::shared_ptr<module_state>> modules;
  std::unordered_map<function_state *, std::shared_ptr<function_state>> functions;
};
module_registry &registry() {
  static auto *r = new module_registry();
  return *r;
}

std::shared_ptr<module_state> find_module(CUmodule m) {
  auto &r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.modules.find(reinterpret_cast<module_state *>(m));
  return it == r.modules.end() ? nullptr : it->second;
}

// __device__ variables: zeroed storage that copies and pointer queries treat as device memory.
void allocate_globals(module_state &m) {
  for (const auto &[name, size] : m.symbols.globals) {
    allocation a;
    const std::size_t bytes = std::max<std::size_t>(size, 1);
    a.map_len = bytes;
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      continue;
    a.base = reinterpret_cast<std::uintptr_t>(p);
    a.size = size;
    a.kind = mem_kind::module_global;
    a.ctx = m.ctx;
    a.device = m.ctx->device;
    insert_allocation(a);
    m.globals.emplace(name, a.base);
  }
}

void release_module(module_state &m) {
  auto &r = registry();
  {
    std::lock_guard lock(r.mu);
    for (const auto &[name, f] : m.functions)
      r.functions.erase(f.get());
  }
  for (const auto &[name, base] : m.globals) {
    allocation a;
    if (erase_allocation(base, a))
      unmap_allocation(a);
  }
}

CUresult load_module(CUmodule *out, const void *image) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (out == nullptr || image == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t length = 0;
  const image_kind kind = classify_image(image, length);
  if (kind == image_kind::invalid || length == 0)
    return CUDA_ERROR_INVALID_IMAGE;
  // The real driver's answer to code for another architecture (and to PTX newer than the device).
  if (!image_runs_on_device(image, length, kind))
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  auto m = std::make_shared<module_state>();
  m->ctx = c;
  m->symbols = scan_image(image, length, kind);
  allocate_globals(*m);
  auto &r = registry();
  std::lock_guard lock(r.mu);
  *out = reinterpret_cast<CUmodule>(m.get());
  r.modules.emplace(m.get(), std::move(m));
  return CUDA_SUCCESS;
}

// ---- launch

CUresult check_dims(const launch_dims &d) {
  static constexpr unsigned max_block[3] = {1024, 1024, 64};
  static constexpr unsigned max_grid[3] = {2147483647u, 65535, 65535};
  std::uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (d.grid[i] == 0 || d.block[i] == 0 || d.block[i] > max_block[i] || d.grid[i] > max_grid[i])
      return CUDA_ERROR_INVALID_VALUE;
    threads *= d.block[i];
  }
  return threads > 1024 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

// Copies the arguments at launch time, as the driver does: the caller may reuse its buffers
// as soon as cuLaunchKernel returns. Each parameter sits at its natural alignment.
CUresult marshal_args(const kernel_desc &k, void **params, void **extra,
                      std::vector<unsigned char> &storage, std::vector<std::size_t> &offsets) {
  if (params != nullptr && extra != nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t total = 0;
  for (std::size_t size : k.param_sizes) {
    const std::size_t align = std::min<std::size_t>(size, 8);
    total = (total + align - 1) / align * align;
    offsets.push_back(total);
    total += size;
  }
  storage.assign(std::max<std::size_t>(total, 1), 0);
  if (k.param_sizes.empty())
    return CUDA_SUCCESS;
  if (params != nullptr) {
    for (std::size_t i = 0; i < k.param_sizes.size(); ++i) {
      if (params[i] == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(storage.data() + offsets[i], params[i], k.param_sizes[i]);
    }
    return CUDA_SUCCESS;
  }
  if (extra == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  const void *buffer = nullptr;
  const std::size_t *buffer_size = nullptr;
  for (std::size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
      buffer_size = static_cast<const std::size_t *>(extra[i + 1]);
    else
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (buffer == nullptr || buffer_size == nullptr || *buffer_size < total)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(storage.data(), buffer, total);
  return CUDA_SUCCESS;
}

CUresult launch(CUfunction f, launch_dims dims, CUstream h, void **params, void **extra,
                null_stream mode, bool cooperative) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<function_state> fn = find_function(f);
  if (!fn)
    return CUDA_ERROR_INVALID_HANDLE;
  std::shared_ptr<stream> s;
  if (CUresult r = resolve_stream(h, mode, s))
    return r;
  if (CUresult r = check_dims(dims))
    return r;
  // Above 48 KiB a kernel must opt in with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
  if (dims.shared_bytes > static_cast<unsigned>(fn->max_dynamic_shared))
    return CUDA_ERROR_INVALID_VALUE;
  if (cooperative) {
    const std::uint64_t blocks = std::uint64_t{dims.grid[0]} * dims.grid[1] * dims.grid[2];
    const int per_sm = blocks_per_sm(
        *fn, static_cast<int>(dims.block[0] * dims.block[1] * dims.block[2]), dims.shared_bytes);
    if (blocks > static_cast<std::uint64_t>(per_sm) * sim_sm_count)
      return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  }
  auto storage = std::make_shared<std::vector<unsigned char>>();
  std::vector<std::size_t> offsets;
  if (CUresult r = marshal_args(*fn->kernel, params, extra, *storage, offsets))
    return r;
  const bool corrupt = corrupt_requested();
  const kernel_desc *k = fn->kernel;
  enqueue(s, [k, dims, storage, offsets = std::move(offsets), corrupt] {
    std::vector<void *> args(offsets.size());
    for (std::size_t i = 0; i < offsets.size(); ++i)
      args[i] = storage->data() + offsets[i];
    k->fn(dims, args.data());
    if (corrupt && k->output_param >= 0)
      corrupt_byte(*static_cast<void **>(args[static_cast<std::size_t>(k->output_param)]));
  });
  return CUDA_SUCCESS;
}

launch_dims dims_of(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned shared) {
  return launch_dims{{gx, gy, gz}, {bx, by, bz}, shared};
}

} // namespace

std::shared_ptr<function_state> find_function(CUfunction f) {
  auto &r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.functions.find(reinterpret_cast<function_state *>(f));
  return it == r.functions.end() ? nullptr : it->second;
}

void unload_context_modules(context *c) {
  std::vector<std::shared_ptr<module_state>> owned;
  {
    auto &r = registry();
    std::lock_guard lock(r.mu);
    for (auto it = r.modules.begin(); it != r.modules.end();) {
      if (it->second->ctx == c) {
        owned.push_back(it->second);
        it = r.modules.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto &m : owned)
    release_module(*m);
}

} // namespace cuparity::sim

using namespace cuparity::sim;

CUPARITY_SIM_API(cuModuleLoadData, (CUmodule * module, const void *image), (module, image),
                 (void)0) {
  return load_module(module, image);
}

CUPARITY_SIM_API(cuModuleLoadDataEx,
                 (CUmodule * module, const void *image, unsigned int numOptions,
                  CUjit_option *options, void **optionValues),
                 (module, image, numOptions, options, optionValues), (void)0) {
  jit_logs logs;
  if (CUresult r = parse_jit_options(numOptions, options, optionValues, logs))
    return r;
  const CUresult result = load_module(module, image);
  write_log(logs.error_log, logs.error_size, logs.error_size_slot, "");
  write_log(logs.info_log, logs.info_size, logs.info_size_slot, "");
  return result;
}

CUPARITY_SIM_API(cuModuleUnload, (CUmodule hmod), (hmod), (void)0) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<module_state> m;
  {
    auto &r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.modules.find(reinterpret_cast<module_state *>(hmod));
    if (it == r.modules.end())
      return CUDA_ERROR_INVALID_HANDLE;
    m = it->second;
    r.modules.erase(it);
  }
  // Queued launches of its functions finish first (they hold their own kernel pointers anyway).
  synchronize_context(m->ctx);
  release_module(*m);
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuModuleGetFunction, (CUfunction * hfunc, CUmodule hmod, const char *name),
                 (hfunc, hmod, name), (void)0) {
  if (CUresult r = check_init())
    return r;
  if (hfunc == nullptr || name == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<module_state> m = find_module(hmod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  // A kernel must be in the image and have a CPU implementation in the registry.
  const kernel_desc *k = find_kernel(name);
  if (k == nullptr || !m->symbols.entries.contains(std::string_view(name)))
    return CUDA_ERROR_NOT_FOUND;
  auto &r = registry();
  std::lock_guard lock(r.mu);
  auto &slot = m->functions[name];
  if (!slot) {
    slot = std::make_shared<function_state>();
    slot->ctx = m->ctx;
    slot->kernel = k;
    r.functions.emplace(slot.get(), slot);
  }
  *hfunc = reinterpret_cast<CUfunction>(slot.get());
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuModuleGetGlobal_v2,
                 (CUdeviceptr * dptr, size_t *bytes, CUmodule hmod, const char *name),
                 (dptr, bytes, hmod, name), bump(bytes)) {
  if (CUresult r = check_init())
    return r;
  if (name == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<module_state> m = find_module(hmod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  auto it = m->globals.find(std::string_view(name));
  if (it == m->globals.end())
    return CUDA_ERROR_NOT_FOUND;
  if (dptr != nullptr)
    *dptr = it->second;
  if (bytes != nullptr)
    *bytes = m->symbols.globals.find(std::string_view(name))->second;
  return CUDA_SUCCESS;
}

// 32-bit ABI: cannot express the sim's addresses (see memory.cpp).
CUPARITY_SIM_API(cuModuleGetGlobal,
                 (CUdeviceptr_v1 * dptr, unsigned int *bytes, CUmodule hmod, const char *name),
                 (dptr, bytes, hmod, name), (void)0) {
  if (CUresult r = check_init())
    return r;
  return CUDA_ERROR_NOT_SUPPORTED;
}

// Fixed figures: no static shared/const/local memory, 32 registers, PTX and SASS version 9.0.
CUPARITY_SIM_API(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc),
                 (pi, attrib, hfunc), bump(pi)) {
  if (CUresult r = check_init())
    return r;
  if (pi == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<function_state> f = find_function(hfunc);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = 1024;
    break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *pi = sim_num_regs;
    break;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION: // the images the sim loads are built for the device
    *pi = device_sm();
    break;
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *pi = device_sm();
    break;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = f->max_dynamic_shared;
    break;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    *pi = f->carveout;
    break;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    *pi = 1;
    break;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    *pi = 0;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value),
                 (hfunc, attrib, value), (void)0) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<function_state> f = find_function(hfunc);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (value < 0 || value > sim_max_dynamic_shared_optin)
      return CUDA_ERROR_INVALID_VALUE;
    f->max_dynamic_shared = value;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if (value < -1 || value > 100)
      return CUDA_ERROR_INVALID_VALUE;
    f->carveout = value;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUPARITY_SIM_API(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), (hfunc, config),
                 (void)0) {
  if (CUresult r = check_init())
    return r;
  std::shared_ptr<function_state> f = find_function(hfunc);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
    return CUDA_ERROR_INVALID_VALUE;
  f->cache = config;
  return CUDA_SUCCESS;
}

CUPARITY_SIM_API(cuLaunchKernel,
                 (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra),
                 (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                  hStream, kernelParams, extra),
                 (void)0) {
  return launch(
      f, dims_of(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes),
      hStream, kernelParams, extra, null_stream::legacy, false);
}
CUPARITY_SIM_API(cuLaunchKernel_ptsz,
                 (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra),
                 (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                  hStream, kernelParams, extra),
                 (void)0) {
  return launch(
      f, dims_of(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes),
      hStream, kernelParams, extra, null_stream::per_thread, false);
}
CUPARITY_SIM_API(cuLaunchCooperativeKernel,
                 (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams),
                 (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                  hStream, kernelParams),
                 (void)0) {
  return launch(
      f, dims_of(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes),
      hStream, kernelParams, nullptr, null_stream::legacy, true);
}
CUPARITY_SIM_API(cuLaunchCooperativeKernel_ptsz,
                 (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams),
                 (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                  hStream, kernelParams),
                 (void)0) {
  return launch(
      f, dims_of(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes),
      hStream, kernelParams, nullptr, null_stream::per_thread, true);
}
