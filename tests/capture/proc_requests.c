/* cuGetProcAddress the ways cudart and the bindings use it (tests/capture/README.md). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NUMBA_PROBE_NO_MAIN
#include "numba_probe.c"

typedef int (*gpa_v2)(const char *, void **, int, unsigned long long, int *);
typedef int (*gpa_v1)(const char *, void **, int, unsigned long long);
typedef int (*bind_fn)(const char *, int);

static void ask(gpa_v2 gpa, const char *name, int version, unsigned long long flags) {
  void *p = 0;
  int status = -1;
  int r = gpa(name, &p, version, flags, &status);
  printf("%s@%d/%llu: result %d status %d %s\n", name, version, flags, r, status,
         p ? "pointer" : "null");
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--child") == 0)
    return numba_probe(argv[2]);
  if (argc < 2) {
    fprintf(stderr, "usage: proc_requests DRIVER [FAKE_CYDRIVER] | --child DRIVER\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    fprintf(stderr, "proc_requests: %s\n", dlerror());
    return 3;
  }
  gpa_v2 gpa = (gpa_v2)dlsym(h, "cuGetProcAddress_v2");
  /* Bound directly, never asked of cuGetProcAddress (what cuBLASLt does in a PyTorch process). */
  printf("cuDriverGetVersion %s\n", dlsym(h, "cuDriverGetVersion") ? "found" : "missing");
  ask(gpa, "cuMemcpyHtoD", 12000, 1); /* legacy */
  ask(gpa, "cuMemcpyHtoD", 12000, 2); /* per-thread */
  ask(gpa, "cuStreamSynchronize", 12000, 0);
  ask(gpa, "cuMemcpyHtoD", 3020, 2); /* below the variant's 7000: no pointer */
  ask(gpa, "cuCtxCreate", 12050, 0); /* cuCtxCreate_v4, beside the v1 request's _v2 below */
  /* cudart's way: ask for cuGetProcAddress itself, then resolve through what came back. */
  gpa_v2 self = 0;
  int status = -1;
  gpa("cuGetProcAddress", (void **)&self, 12000, 0, &status);
  ask(self, "cuEventRecord", 12000, 2);
  gpa_v1 old = 0;
  gpa("cuGetProcAddress", (void **)&old, 11030, 0, &status);
  void *p = 0;
  printf("v1 cuCtxCreate: result %d\n", old("cuCtxCreate", &p, 3020, 0));
  if (argc >= 3) {
    void *fake = dlopen(argv[2], RTLD_NOW);
    bind_fn bind = fake ? (bind_fn)dlsym(fake, "fake_bind_driver") : 0;
    /* The old cuda-python bug: the per-thread flag whatever the variable says. */
    printf("fake cydriver: %d\n", bind ? bind(argv[1], 1) : -1);
  }
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    execl(argv[0], argv[0], "--child", argv[1], (char *)0);
    _exit(127);
  }
  int child_status = 0;
  waitpid(child, &child_status, 0);
  return WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 1;
}
