// NVRTC's entry points, bound at run time, and compilation with its log.
#include "harness/toolchain/nvrtc.hpp"

#include <nvrtc.h>

namespace cuparity {

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
  void *h = open_toolkit_library("libnvrtc.so.13", m_path);
  *m_fn = table{toolkit_function<decltype(table::version)>(h, "nvrtcVersion"),
                toolkit_function<decltype(table::error_string)>(h, "nvrtcGetErrorString"),
                toolkit_function<decltype(table::create)>(h, "nvrtcCreateProgram"),
                toolkit_function<decltype(table::destroy)>(h, "nvrtcDestroyProgram"),
                toolkit_function<decltype(table::compile)>(h, "nvrtcCompileProgram"),
                toolkit_function<decltype(table::log_size)>(h, "nvrtcGetProgramLogSize"),
                toolkit_function<decltype(table::log)>(h, "nvrtcGetProgramLog"),
                toolkit_function<decltype(table::ptx_size)>(h, "nvrtcGetPTXSize"),
                toolkit_function<decltype(table::ptx)>(h, "nvrtcGetPTX"),
                toolkit_function<decltype(table::cubin_size)>(h, "nvrtcGetCUBINSize"),
                toolkit_function<decltype(table::cubin)>(h, "nvrtcGetCUBIN"),
                toolkit_function<decltype(table::ltoir_size)>(h, "nvrtcGetLTOIRSize"),
                toolkit_function<decltype(table::ltoir)>(h, "nvrtcGetLTOIR")};
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

} // namespace cuparity
