// Toolkit libraries by soname, through the shared candidates loop.
#include "harness/toolchain/toolkit_library.hpp"

#include "harness/platform/library_loader.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace cuparity {

void *open_toolkit_library(const std::string &soname, std::string &opened) {
  std::vector<std::string> names{soname};
  if (const char *home = std::getenv("CUDA_HOME"))
    names.push_back(std::string(home) + "/lib64/" + soname);
  names.push_back("/usr/local/cuda/lib64/" + soname);
  const auto found = open_first_library(names);
  if (!found.handle)
    throw std::runtime_error("cannot load " + soname + "; tried:" + found.tried);
  opened = found.opened;
  return found.handle;
}

void *toolkit_symbol(void *library, const char *name) {
  void *p = dlsym(library, name);
  if (!p)
    throw std::runtime_error(std::string("missing symbol ") + name + " in the toolkit library");
  return p;
}

} // namespace cuparity
