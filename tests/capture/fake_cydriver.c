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

/* cuda.bindings' table in small: resolves `names[i]` with cuGetProcAddress_v2 at 12000 (the
 * per-thread flag when told) into `pointers[i]`, as the real module fills its globals. The fake
 * package of tools/capture/tests/test_table_hook.py reports them from _inspect_function_pointers().
 * Returns how many the driver answered, -1 when it cannot be opened. */
__attribute__((visibility("default"))) int fake_resolve(const char *driver, int per_thread,
                                                        const char *const *names, void **pointers,
                                                        int n) {
  void *h = dlopen(driver, RTLD_NOW);
  gpa_v2 gpa = h ? (gpa_v2)dlsym(h, "cuGetProcAddress_v2") : 0;
  if (!gpa)
    return -1;
  int bound = 0, status = 0;
  const unsigned long long flags = per_thread ? 2 : 0;
  for (int i = 0; i < n; ++i) {
    pointers[i] = 0;
    bound += gpa(names[i], &pointers[i], 12000, flags, &status) == 0 && pointers[i];
  }
  return bound;
}
