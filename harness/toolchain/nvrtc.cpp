// Run-time loading of NVRTC and nvJitLink: nothing links them, like the driver itself.
#include "harness/toolchain/nvrtc.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>

namespace cuparity {
namespace {

void *open_first(const std::vector<std::string> &names, std::string &opened) {
  std::string tried;
  for (const auto &n : names) {
    if (void *h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = n;
      return h;
    }
    const char *why = dlerror();
    tried += "\n  " + n + ": " + (why ? why : "?");
  }
  throw std::runtime_error("cannot load " + names.front() + "; tried:" + tried);
}

std::vector<std::string> candidates(const std::string &soname) {
  std::vector<std::string> out{soname};
  if (const char *home = std::getenv("CUDA_HOME"))
    out.push_back(std::string(home) + "/lib64/" + soname);
  out.push_back("/usr/local/cuda/lib64/" + soname);
  return out;
}

template <class T> T sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p)
    throw std::runtime_error(std::string("missing symbol ") + name + " in the toolkit library");
  return reinterpret_cast<T>(p);
}

} // namespace

// The library handles stay open for the process: these are process-wide singletons.
struct nvrtc::table {
  decltype(&nvrtcVersion) version;
  decltype(&nvrtcGetErrorString) error_string;
  decltype(&nvrtcCreateProgram) create;
  decltype(&nvrtcDestroyProgram) destroy;
  decltype(&nvrtcCompileProgram) compile;
  decltype(&nvrtcGetProgramLogSize) log_size;
  decltype(&nvrtcGetProgramLog) log;
  decltype(&nvrtcGetPTXSize) ptx_size;
  decltype(&nvrtcGetPTX) ptx;
  decltype(&nvrtcGetCUBINSize) cubin_size;
  decltype(&nvrtcGetCUBIN) cubin;
  decltype(&nvrtcGetLTOIRSize) ltoir_size;
  decltype(&nvrtcGetLTOIR) ltoir;
};

nvrtc::nvrtc() : m_fn(std::make_shared<table>()) {
  void *h = open_first(candidates("libnvrtc.so.13"), m_path);
  *m_fn = table{sym<decltype(table::version)>(h, "nvrtcVersion"),
                sym<decltype(table::error_string)>(h, "nvrtcGetErrorString"),
                sym<decltype(table::create)>(h, "nvrtcCreateProgram"),
                sym<decltype(table::destroy)>(h, "nvrtcDestroyProgram"),
                sym<decltype(table::compile)>(h, "nvrtcCompileProgram"),
                sym<decltype(table::log_size)>(h, "nvrtcGetProgramLogSize"),
                sym<decltype(table::log)>(h, "nvrtcGetProgramLog"),
                sym<decltype(table::ptx_size)>(h, "nvrtcGetPTXSize"),
                sym<decltype(table::ptx)>(h, "nvrtcGetPTX"),
                sym<decltype(table::cubin_size)>(h, "nvrtcGetCUBINSize"),
                sym<decltype(table::cubin)>(h, "nvrtcGetCUBIN"),
                sym<decltype(table::ltoir_size)>(h, "nvrtcGetLTOIRSize"),
                sym<decltype(table::ltoir)>(h, "nvrtcGetLTOIR")};
}

nvrtc &nvrtc::instance() {
  static nvrtc n;
  return n;
}

std::pair<int, int> nvrtc::version() const {
  int major = 0, minor = 0;
  m_fn->version(&major, &minor);
  return {major, minor};
}

compile_output nvrtc::compile(const std::string &source, const std::string &name,
                              const std::vector<std::string> &options) const {
  const table &f = *m_fn;
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = f.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    throw toolchain_error(std::string("nvrtcCreateProgram(") + name + ") -> " + f.error_string(r),
                          "");
  struct guard {
    const table &f;
    nvrtcProgram &p;
    ~guard() { f.destroy(&p); }
  } g{f, prog};
  std::vector<const char *> opts;
  for (const auto &o : options)
    opts.push_back(o.c_str());
  nvrtcResult r = f.compile(prog, static_cast<int>(opts.size()), opts.data());
  compile_output out;
  std::size_t log_size = 0;
  f.log_size(prog, &log_size);
  out.log.resize(log_size);
  if (log_size)
    f.log(prog, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
    out.log.pop_back();
  if (r != NVRTC_SUCCESS)
    throw toolchain_error(std::string("nvrtcCompileProgram(") + name + ") -> " + f.error_string(r),
                          out.log);
  std::size_t n = 0;
  if (f.ptx_size(prog, &n) == NVRTC_SUCCESS && n > 1) {
    out.ptx.resize(n);
    f.ptx(prog, out.ptx.data());
  }
  if (f.cubin_size(prog, &n) == NVRTC_SUCCESS && n > 0) {
    out.cubin.resize(n);
    f.cubin(prog, out.cubin.data());
  }
  if (f.ltoir_size(prog, &n) == NVRTC_SUCCESS && n > 0) {
    out.ltoir.resize(n);
    f.ltoir(prog, out.ltoir.data());
  }
  return out;
}

struct nvjitlink::table {
  decltype(&nvJitLinkCreate) create;
  decltype(&nvJitLinkDestroy) destroy;
  decltype(&nvJitLinkAddData) add_data;
  decltype(&nvJitLinkComplete) complete;
  decltype(&nvJitLinkGetLinkedCubinSize) cubin_size;
  decltype(&nvJitLinkGetLinkedCubin) cubin;
  decltype(&nvJitLinkGetErrorLogSize) error_log_size;
  decltype(&nvJitLinkGetErrorLog) error_log;
};

nvjitlink::nvjitlink() : m_fn(std::make_shared<table>()) {
  void *h = open_first(candidates("libnvJitLink.so.13"), m_path);
  // The header's inline wrappers call versioned symbols (__nvJitLinkCreate_13_0); the library
  // also exports the plain names, which is what we bind.
  *m_fn = table{sym<decltype(table::create)>(h, "nvJitLinkCreate"),
                sym<decltype(table::destroy)>(h, "nvJitLinkDestroy"),
                sym<decltype(table::add_data)>(h, "nvJitLinkAddData"),
                sym<decltype(table::complete)>(h, "nvJitLinkComplete"),
                sym<decltype(table::cubin_size)>(h, "nvJitLinkGetLinkedCubinSize"),
                sym<decltype(table::cubin)>(h, "nvJitLinkGetLinkedCubin"),
                sym<decltype(table::error_log_size)>(h, "nvJitLinkGetErrorLogSize"),
                sym<decltype(table::error_log)>(h, "nvJitLinkGetErrorLog")};
}

nvjitlink &nvjitlink::instance() {
  static nvjitlink n;
  return n;
}

std::vector<char> nvjitlink::link(const std::vector<input> &inputs,
                                  const std::vector<std::string> &options) const {
  const table &f = *m_fn;
  std::vector<const char *> opts;
  for (const auto &o : options)
    opts.push_back(o.c_str());
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkResult r = f.create(&h, static_cast<uint32_t>(opts.size()), opts.data());
      r != NVJITLINK_SUCCESS)
    throw toolchain_error("nvJitLinkCreate -> " + std::to_string(static_cast<int>(r)), "");
  struct guard {
    const table &f;
    nvJitLinkHandle &h;
    ~guard() { f.destroy(&h); }
  } g{f, h};
  auto error_log = [&] {
    std::size_t n = 0;
    f.error_log_size(h, &n);
    std::string s(n, '\0');
    if (n)
      f.error_log(h, s.data());
    while (!s.empty() && (s.back() == '\0' || s.back() == '\n'))
      s.pop_back();
    return s;
  };
  for (const auto &in : inputs) {
    nvJitLinkInputType t = in.type == input::ptx     ? NVJITLINK_INPUT_PTX
                           : in.type == input::cubin ? NVJITLINK_INPUT_CUBIN
                           : in.type == input::ltoir ? NVJITLINK_INPUT_LTOIR
                                                     : NVJITLINK_INPUT_FATBIN;
    if (nvJitLinkResult r = f.add_data(h, t, in.data.data(), in.data.size(), in.name.c_str());
        r != NVJITLINK_SUCCESS)
      throw toolchain_error("nvJitLinkAddData(" + in.name + ") -> " +
                                std::to_string(static_cast<int>(r)),
                            error_log());
  }
  if (nvJitLinkResult r = f.complete(h); r != NVJITLINK_SUCCESS)
    throw toolchain_error("nvJitLinkComplete -> " + std::to_string(static_cast<int>(r)),
                          error_log());
  std::size_t n = 0;
  f.cubin_size(h, &n);
  std::vector<char> cubin(n);
  f.cubin(h, cubin.data());
  return cubin;
}

} // namespace cuparity
