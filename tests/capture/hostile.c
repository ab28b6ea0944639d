/* Programs that make a capture's life hard (tests/capture/README.md): `closefds FILE DRIVER`
 * closes every descriptor from 3 up, opens FILE as its own and asks the driver for a function
 * (the audit library must not write into FILE); `two DRIVER_A DRIVER_B` asks two drivers loaded
 * side by side; `flags DRIVER` asks with flags of 2^63 and more. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*gpa_v2)(const char *, void **, int, unsigned long long, int *);

static gpa_v2 open_gpa(const char *driver) {
  void *h = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
  return h ? (gpa_v2)dlsym(h, "cuGetProcAddress_v2") : 0;
}

static int ask(gpa_v2 gpa, const char *name, unsigned long long flags) {
  void *p = 0;
  int status = 0;
  return gpa(name, &p, 12000, flags, &status);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "closefds") == 0) {
    gpa_v2 gpa = open_gpa(argv[3]);
    for (int fd = 3; fd < 1024; ++fd)
      close(fd);
    int mine = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ask(gpa, "cuDeviceGet", 0);
    ssize_t w = write(mine, "mine\n", 5);
    close(mine);
    return w == 5 ? 0 : 1;
  }
  if (argc == 4 && strcmp(argv[1], "two") == 0) {
    gpa_v2 a = open_gpa(argv[2]), b = open_gpa(argv[3]);
    if (!a || !b || a == b)
      return 3;
    return ask(a, "cuInit", 0) | ask(b, "cuDeviceGet", 0);
  }
  if (argc == 3 && strcmp(argv[1], "flags") == 0) {
    gpa_v2 gpa = open_gpa(argv[2]);
    ask(gpa, "cuInit", 1ULL << 63);
    ask(gpa, "cuInit", ~0ULL);
    return 0;
  }
  fprintf(stderr, "usage: hostile closefds FILE DRIVER | two DRIVER_A DRIVER_B | flags DRIVER\n");
  return 2;
}
