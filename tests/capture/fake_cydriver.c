/* A stand-in for cuda.bindings' cydriver module (tests/capture/README.md). */
#include <dlfcn.h>

typedef int (*gpa_v2)(const char *, void **, int, unsigned long long, int *);

__attribute__((visibility("default"))) int fake_bind_driver(const char *driver, int per_thread) {
  void *h = dlopen(driver, RTLD_NOW);
  gpa_v2 gpa = h ? (gpa_v2)dlsym(h, "cuGetProcAddress_v2") : 0;
  if (!gpa)
    return -1;
  void *p = 0;
  int status = 0, bound = 0;
  const unsigned long long flags = per_thread ? 2 : 0;
  bound += gpa("cuMemcpyHtoD", &p, 12000, flags, &status) == 0;
  bound += gpa("cuStreamSynchronize", &p, 12000, flags, &status) == 0;
  return bound;
}
