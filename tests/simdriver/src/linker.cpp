// The driver's JIT linker (cuLink*): collects PTX/cubin/fatbin inputs, resolves .extern function
// references across them, and emits an image the sim's module loader accepts.
#include "api.hpp"

#include <cstring>
#include <fstream>
#include <iterator>

namespace cuparity::sim {

namespace {

struct link_input {
  std::string name;
  image_symbols symbols;
};

struct link_state {
  jit_logs logs;
  std::vector<link_input> inputs;
  std::string output;
};

struct link_registry {
  std::mutex mu;
  std::unordered_map<link_state *, std::unique_ptr<link_state>> live;
};
link_registry &links() {
  static auto *r = new link_registry();
  return *r;
}

link_state *find_link(CUlinkState h) {
  auto &r = links();
  std::lock_guard lock(r.mu);
  auto it = r.live.find(reinterpret_cast<link_state *>(h));
  return it == r.live.end() ? nullptr : it->second.get();
}

CUresult link_create(unsigned n, CUjit_option *options, void **values, CUlinkState *out) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (out == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto state = std::make_unique<link_state>();
  if (CUresult r = parse_jit_options(n, options, values, state->logs))
    return r;
  auto &reg = links();
  std::lock_guard lock(reg.mu);
  *out = reinterpret_cast<CUlinkState>(state.get());
  reg.live.emplace(state.get(), std::move(state));
  return CUDA_SUCCESS;
}

CUresult add_bytes(link_state *s, CUjitInputType type, const void *data, std::size_t size,
                   const char *name) {
  if (data == nullptr || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Work on a NUL-terminated copy: PTX given with an exact size need not be terminated.
  std::string bytes(static_cast<const char *>(data), size);
  std::size_t length = 0;
  image_kind kind = image_kind::invalid;
  switch (type) {
  case CU_JIT_INPUT_PTX:
    kind = classify_image(bytes.c_str(), length) == image_kind::ptx ? image_kind::ptx
                                                                    : image_kind::invalid;
    if (kind == image_kind::invalid)
      return CUDA_ERROR_INVALID_PTX;
    break;
  case CU_JIT_INPUT_CUBIN:
  case CU_JIT_INPUT_OBJECT:
  case CU_JIT_INPUT_FATBINARY:
  case CU_JIT_INPUT_LIBRARY:
    kind = classify_image(bytes.c_str(), length);
    if (type == CU_JIT_INPUT_LIBRARY)
      kind = image_kind::fatbin; // an archive: scan every embedded ELF
    if (kind == image_kind::invalid || kind == image_kind::ptx)
      return CUDA_ERROR_INVALID_IMAGE;
    length = size;
    break;
  case CU_JIT_INPUT_NVVM:
    // JIT LTO through cuLink was removed from the driver linker (use nvJitLink).
    return CUDA_ERROR_NOT_SUPPORTED;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Code for another architecture is refused as cuModuleLoadData refuses it; an archive holds
  // members for many, and only the ones the link needs would have to match.
  if (type != CU_JIT_INPUT_LIBRARY && !image_runs_on_device(bytes.c_str(), length, kind))
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  s->inputs.push_back({name != nullptr ? name : "", scan_image(bytes.c_str(), length, kind)});
  return CUDA_SUCCESS;
}

CUresult link_add_data(CUlinkState h, CUjitInputType type, void *data, std::size_t size,
                       const char *name, unsigned n, CUjit_option *options, void **values) {
  if (CUresult r = check_init())
    return r;
  link_state *s = find_link(h);
  if (s == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  jit_logs ignored;
  if (CUresult r = parse_jit_options(n, options, values, ignored))
    return r;
  return add_bytes(s, type, data, size, name);
}

CUresult link_add_file(CUlinkState h, CUjitInputType type, const char *path, unsigned n,
                       CUjit_option *options, void **values) {
  if (CUresult r = check_init())
    return r;
  link_state *s = find_link(h);
  if (s == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (path == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  jit_logs ignored;
  if (CUresult r = parse_jit_options(n, options, values, ignored))
    return r;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return CUDA_ERROR_FILE_NOT_FOUND;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return add_bytes(s, type, bytes.data(), bytes.size(), path);
}

// The linked image is PTX-shaped text: the loader reads its .entry and .global declarations.
std::string emit_image(const link_state &s) {
  // Linked for the device, as the real linker does (its target defaults to the context's device).
  std::string out = "// cuparity simdriver linked image\n.version 9.0\n.target sm_" +
                    std::to_string(device_sm()) + "\n.address_size 64\n";
  std::set<std::string, std::less<>> entries;
  std::map<std::string, std::size_t, std::less<>> globals;
  for (const link_input &in : s.inputs) {
    entries.insert(in.symbols.entries.begin(), in.symbols.entries.end());
    globals.insert(in.symbols.globals.begin(), in.symbols.globals.end());
  }
  for (const auto &[name, size] : globals)
    out += ".visible .global .align 8 .b8 " + name + "[" + std::to_string(size) + "];\n";
  for (const std::string &name : entries)
    out += ".visible .entry " + name + "()\n{\n\tret;\n}\n";
  return out;
}

} // namespace

CUresult parse_jit_options(unsigned n, const CUjit_option *options, void **values, jit_logs &out) {
  if (n > 0 && (options == nullptr || values == nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; ++i) {
    const auto as_size = reinterpret_cast<std::uintptr_t>(values[i]);
    switch (options[i]) {
    case CU_JIT_ERROR_LOG_BUFFER:
      out.error_log = static_cast<char *>(values[i]);
      break;
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
      out.error_size = as_size;
      out.error_size_slot = &values[i];
      break;
    case CU_JIT_INFO_LOG_BUFFER:
      out.info_log = static_cast<char *>(values[i]);
      break;
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
      out.info_size = as_size;
      out.info_size_slot = &values[i];
      break;
    default:
      // Other options tune code generation, which the sim does not do: accepted and ignored.
      if (options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS)
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

void write_log(char *buffer, std::size_t size, void **size_slot, const std::string &text) {
  std::size_t used = 0;
  if (buffer != nullptr && size > 0) {
    const std::size_t n = std::min(size - 1, text.size());
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
    used = n == 0 ? 0 : n + 1;
  }
  // OUT: the driver reports how much of the buffer it filled.
  if (size_slot != nullptr)
    *size_slot = reinterpret_cast<void *>(used);
}

} // namespace cuparity::sim

using namespace cuparity::sim;

namespace {
CUresult link_complete(CUlinkState h, void **cubinOut, size_t *sizeOut) {
  if (CUresult r = check_init())
    return r;
  link_state *s = find_link(h);
  if (s == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (cubinOut == nullptr || sizeOut == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::set<std::string, std::less<>> defined;
  for (const link_input &in : s->inputs)
    defined.insert(in.symbols.defined_funcs.begin(), in.symbols.defined_funcs.end());
  std::string errors;
  for (const link_input &in : s->inputs)
    for (const std::string &ref : in.symbols.extern_refs)
      if (!defined.contains(ref))
        errors += "error   : Undefined reference to '" + ref + "' in '" + in.name + "'\n";
  if (!errors.empty()) {
    write_log(s->logs.error_log, s->logs.error_size, s->logs.error_size_slot, errors);
    // Unverified: the code libcuda returns for an unresolved symbol at cuLinkComplete.
    return CUDA_ERROR_INVALID_SOURCE; // what driver 580 (H200) answers for an undefined reference
  }
  s->output = emit_image(*s);
  write_log(s->logs.error_log, s->logs.error_size, s->logs.error_size_slot, "");
  write_log(s->logs.info_log, s->logs.info_size, s->logs.info_size_slot,
            "info    : cuparity simdriver linked " + std::to_string(s->inputs.size()) +
                " input(s)\n");
  // The linker owns the image: valid until cuLinkDestroy, as documented.
  *cubinOut = s->output.data();
  *sizeOut = s->output.size() + 1;
  return CUDA_SUCCESS;
}
} // namespace

CUPARITY_SIM_API(cuLinkCreate_v2,
                 (unsigned int numOptions, CUjit_option *options, void **optionValues,
                  CUlinkState *stateOut),
                 (numOptions, options, optionValues, stateOut), (void)0) {
  return link_create(numOptions, options, optionValues, stateOut);
}
CUPARITY_SIM_API(cuLinkCreate,
                 (unsigned int numOptions, CUjit_option *options, void **optionValues,
                  CUlinkState *stateOut),
                 (numOptions, options, optionValues, stateOut), (void)0) {
  return link_create(numOptions, options, optionValues, stateOut);
}
CUPARITY_SIM_API(cuLinkAddData_v2,
                 (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                  unsigned int numOptions, CUjit_option *options, void **optionValues),
                 (state, type, data, size, name, numOptions, options, optionValues), (void)0) {
  return link_add_data(state, type, data, size, name, numOptions, options, optionValues);
}
CUPARITY_SIM_API(cuLinkAddData,
                 (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                  unsigned int numOptions, CUjit_option *options, void **optionValues),
                 (state, type, data, size, name, numOptions, options, optionValues), (void)0) {
  return link_add_data(state, type, data, size, name, numOptions, options, optionValues);
}
CUPARITY_SIM_API(cuLinkAddFile_v2,
                 (CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                  CUjit_option *options, void **optionValues),
                 (state, type, path, numOptions, options, optionValues), (void)0) {
  return link_add_file(state, type, path, numOptions, options, optionValues);
}
CUPARITY_SIM_API(cuLinkAddFile,
                 (CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                  CUjit_option *options, void **optionValues),
                 (state, type, path, numOptions, options, optionValues), (void)0) {
  return link_add_file(state, type, path, numOptions, options, optionValues);
}
CUPARITY_SIM_API(cuLinkComplete, (CUlinkState state, void **cubinOut, size_t *sizeOut),
                 (state, cubinOut, sizeOut), (void)0) {
  return link_complete(state, cubinOut, sizeOut);
}
CUPARITY_SIM_API(cuLinkDestroy, (CUlinkState state), (state), (void)0) {
  if (CUresult r = check_init())
    return r;
  auto &reg = links();
  std::lock_guard lock(reg.mu);
  return reg.live.erase(reinterpret_cast<link_state *>(state)) ? CUDA_SUCCESS
                                                               : CUDA_ERROR_INVALID_HANDLE;
}
