// open_first_library: the candidates loop shared by the driver and the toolkit libraries.
#include "harness/platform/library_loader.hpp"

#include <dlfcn.h>

namespace cuparity {

library_candidates_result open_first_library(const std::vector<std::string> &names) {
  library_candidates_result out;
  for (const auto &name : names) {
    if (void *h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      out.handle = h;
      out.opened = name;
      return out;
    }
    const char *why = dlerror();
    out.tried += "\n  " + name + ": " + (why ? why : "unknown dlopen error");
  }
  return out;
}

} // namespace cuparity
