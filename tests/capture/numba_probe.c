/* Numba's ctypes binding in C: suffix probing with dlsym (tests/capture/README.md). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_functions[] = {"cuInit", "cuMemcpyHtoD", "cuStreamSynchronize",
                                          "cuCtxPushCurrent", 0};

int numba_probe(const char *driver) {
  void *h = dlopen(driver, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    fprintf(stderr, "numba_probe: %s\n", dlerror());
    return 3;
  }
  const char *ptds = getenv("PROBE_PTDS");
  const int per_thread = ptds && atoi(ptds) != 0;
  static const char *const k_ptds[] = {"_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz", 0};
  static const char *const k_plain[] = {"_v2", "", 0};
  for (const char *const *f = k_functions; *f; ++f) {
    void *found = 0;
    for (int pass = per_thread ? 0 : 1; pass < 2 && !found; ++pass)
      for (const char *const *s = pass == 0 ? k_ptds : k_plain; *s && !found; ++s) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", *f, *s);
        found = dlsym(h, name);
      }
    printf("%s %s\n", *f, found ? "found" : "missing");
  }
  return 0;
}

#ifndef NUMBA_PROBE_NO_MAIN
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: numba_probe DRIVER\n");
    return 2;
  }
  return numba_probe(argv[1]);
}
#endif
