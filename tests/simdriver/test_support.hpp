// Test helpers: load the simulated driver with dlopen, call its exports by name, spawn children.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace cuparity::sim::test {

// A dlopen'd driver library; the tests never link it, exactly like the harness.
class library {
public:
  explicit library(const char *path) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
  void *get(const char *name) const { return handle_ ? dlsym(handle_, name) : nullptr; }
  bool loaded() const { return handle_ != nullptr; }

private:
  void *handle_;
};

// The current-model library, initialised once, with device 0's primary context current on the
// calling thread (call again from new threads).
const library &sim();
CUcontext primary();
const library &legacy();

// Calls an export with the type cudaTypedefs.h gives for it: SIM(cuMemAlloc_v2, cuMemAlloc_v3020)
#define SIM(symbol, pfn) (reinterpret_cast<PFN_##pfn>(::cuparity::sim::test::sim().get(#symbol)))

// A kernel of the sim's registry, from a PTX module loaded once into the primary context.
CUfunction kernel(const char *name);
// Launches cuparity_spin for `ms` milliseconds on a stream (through cuLaunchKernel or _ptsz).
void spin(CUstream s, double ms, bool ptsz = false);

// cuGetProcAddress_v2 of the sim, returning the pointer (nullptr when not found).
void *proc(const char *base, int version, cuuint64_t flags,
           CUdriverProcAddressQueryResult *status = nullptr, CUresult *rc = nullptr);

// The PTX text of a module with the given entries (and extra PTX lines).
std::string ptx_with_entries(const std::vector<std::string> &entries,
                             const std::string &extra = "");

struct child_result {
  int exit_code = -1;
  std::string out;
  std::string err;
  // The value of a "key=value" line of the child's stdout ("" when absent).
  std::string value(const std::string &key) const;
};
// Runs the helper executable (fork+exec through posix_spawn) with `env` added to a clean copy of
// this process's environment (CUPARITY_SIM_* variables removed first).
child_result run_child(const std::vector<std::string> &args, const std::vector<std::string> &env);

} // namespace cuparity::sim::test
