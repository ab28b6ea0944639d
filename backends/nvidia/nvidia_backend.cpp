// The nvidia backend, a separately loaded library: every entry via the driver's
// cuGetProcAddress_v2.
//
// It mirrors cuda-python's cuda.bindings: dlopen the driver, dlsym only cuGetProcAddress_v2, then
// ask it for each base name with the entry's ABI version and one flag for the whole process,
// chosen by CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM (docs/driver-facts.md#gen-a-loader). Unlike
// cuda-python it keeps cuGetProcAddress's result and symbolStatus (cuda-python ignores both): a
// deliberate difference, so the binding map can say why an entry is missing.
#include "harness/driver/backend.hpp"
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/driver_library.hpp"

#include <cstdio>
#include <cstring>

namespace cuparity {
namespace {

const char *flag_name(cuuint64_t flags) {
  return flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM ? "PER_THREAD_DEFAULT_STREAM"
                                                                : "DEFAULT";
}

class nvidia_backend final : public backend {
public:
  nvidia_backend(std::shared_ptr<driver_library> lib, PFN_cuGetProcAddress_v12000 gpa, bool ptds)
      : m_lib(std::move(lib)), m_gpa(gpa), m_ptds(ptds),
        // Like cuda-python: DEFAULT when the variable is off (the driver then gives the legacy
        // symbols, since this library is not compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM),
        // the per-thread flag when on. binding.resolve.audit checks DEFAULT against an explicit
        // LEGACY_STREAM answer.
        m_flags(ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                     : CU_GET_PROC_ADDRESS_DEFAULT) {}

  std::string_view name() const noexcept override { return "nvidia"; }
  const std::string &driver_path() const noexcept override { return m_lib->resolved_path(); }
  bool per_thread_default_stream() const noexcept override { return m_ptds; }

  resolution resolve(const entry_info &entry) override {
    resolution r;
    if (entry.name == "cuGetProcAddress") {
      // The one function found by dlsym: it is how everything else is found.
      r.address = reinterpret_cast<void *>(m_gpa);
      r.symbol = "cuGetProcAddress_v2";
      return r;
    }
    std::string base(entry.name);
    void *p = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const int version = entry.query_version(m_ptds);
    CUresult rc = m_gpa(base.c_str(), &p, version, m_flags, &status);
    r.query_result = static_cast<int>(rc);
    r.symbol_status = static_cast<int>(status);
    if (rc == CUDA_SUCCESS && p) {
      r.address = p;
      r.symbol = symbol_at(p);
      if (r.symbol.empty())
        r.symbol = base; // an address the driver hands out without an exported name
      return r;
    }
    char buf[256];
    std::snprintf(
        buf, sizeof buf, "cuGetProcAddress_v2(\"%s\", %d, %s) returned %d with symbolStatus %d",
        base.c_str(), version, flag_name(m_flags), static_cast<int>(rc), static_cast<int>(status));
    r.missing_reason = buf;
    return r;
  }

private:
  std::shared_ptr<driver_library> m_lib;
  PFN_cuGetProcAddress_v12000 m_gpa;
  bool m_ptds;
  cuuint64_t m_flags;
};

void set_error(char *error, std::size_t size, const std::string &what) {
  if (error && size)
    std::snprintf(error, size, "%s", what.c_str());
}

} // namespace
} // namespace cuparity

/// Returns a plugin_status (harness/driver/backend.hpp) as an int.
extern "C" __attribute__((visibility("default"))) int
cuparity_nvidia_backend_create(const cuparity::nvidia_backend_request *request,
                               cuparity::backend **out, char *error, std::size_t error_size) {
  using namespace cuparity;
  if (!request || !out || request->abi != nvidia_backend_abi || !request->driver_path) {
    set_error(error, error_size,
              "request of ABI " + std::to_string(request ? request->abi : -1) +
                  " not understood (this library speaks ABI " + std::to_string(nvidia_backend_abi) +
                  ")");
    return static_cast<int>(plugin_status::bad_request);
  }
  try {
    auto lib = driver_library::open(request->driver_path);
    auto *gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(lib->symbol("cuGetProcAddress_v2"));
    if (!gpa) {
      set_error(error, error_size,
                "the driver " + lib->resolved_path() + " does not export cuGetProcAddress_v2");
      return static_cast<int>(plugin_status::no_proc_address);
    }
    *out = new nvidia_backend(std::move(lib), gpa, request->per_thread_default_stream);
    return static_cast<int>(plugin_status::ok);
  } catch (const std::exception &e) {
    set_error(error, error_size, e.what());
    return static_cast<int>(plugin_status::driver_unopenable);
  }
}
