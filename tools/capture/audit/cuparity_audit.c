/* An LD_AUDIT library that records how a process binds the CUDA driver (docs/capture.md).
 *
 * glibc's rtld-audit interface (rtld-audit(7)) calls la_symbind64 for every symbol bound from an
 * object that asked for LA_FLG_BINDFROM to one that asked for LA_FLG_BINDTO: PLT and load-time
 * bindings, and dlsym/dlvsym lookups as well (LA_SYMB_DLSYM, LA_SYMB_DLVSYM). The driver is the
 * only BINDTO object, so nothing else is slowed. The address la_symbind64 returns is what the
 * process gets, which lets this library hand out a recording wrapper for cuGetProcAddress and
 * cuGetProcAddress_v2: every pointer the driver gives out is then seen with the version and the
 * flags it was asked for. A wrapper answering a request for cuGetProcAddress itself hands out
 * a wrapper again: cudart asks the driver for cuGetProcAddress (at 11030 and 12000) and resolves
 * everything else through the pointer it gets back. No other call is wrapped, and no
 * la_pltenter/la_pltexit is defined, so a bound call costs what it costs without the audit.
 *
 * Each process appends JSON lines to CUPARITY_CAPTURE_DIR/process-<pid>.jsonl, one write(2) per
 * line (O_APPEND: threads never interleave inside a line). A "process" line describes the image
 * that follows it: the first of the file, and one more after every exec in that process (a shell
 * or `env` exec'ing the program). A child made by fork() starts its own file. Children that exec
 * inherit LD_AUDIT and the variables, so every process of the tree is captured unless it clears
 * its environment. The descriptor sits high (>= 512), and before every line it is checked still to
 * be this file: a program that closes every descriptor and opens its own must not receive events.
 * It survives exec: an image that cannot open its file (another user after `setpriv --reuid`)
 * appends through the one its pid's image before it left open, and one that has no file at all
 * writes a "lost" line into its parent's.
 * Every line is bounded; a string that does not fit is cut (the line says "truncated"), never the
 * line's end. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int cu_result;
typedef int (*gpa_v1_fn)(const char *, void **, int, unsigned long long);
typedef int (*gpa_v2_fn)(const char *, void **, int, unsigned long long, int *);

static char g_dir[3072];
static char g_real_dir[4096]; /* g_dir as /proc/self/fd spells it: symbolic links resolved */
static char g_drivers[1024]; /* ':'-separated extra driver file names (CUPARITY_CAPTURE_DRIVER) */
static int g_enabled;
static int g_fd = -1;
static pid_t g_fd_pid;
static dev_t g_fd_dev;
static ino_t g_fd_ino;
static volatile int g_opening;

/* ---- output: bounded lines, JSON strings (valid UTF-8 kept, other bytes as \xNN text) ---- */

enum { k_reserve = 64 }; /* room kept for the closing tokens of a line */

struct line {
  char *text;
  size_t cap, n;
  int truncated;
};

/* Structural text: may use the reserve, so a line always closes. */
static void put(struct line *l, const char *s, size_t len) {
  if (l->n + len + 1 >= l->cap) {
    l->truncated = 1;
    return;
  }
  memcpy(l->text + l->n, s, len);
  l->n += len;
}

static void puts_raw(struct line *l, const char *s) {
  put(l, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 for a byte that starts none. */
static size_t utf8_length(const unsigned char *p) {
  size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
  if (p[0] >= 0xf8 || len == 0)
    return 0;
  for (size_t i = 1; i < len; ++i)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
    return 0; /* overlong, surrogate, beyond U+10FFFF */
  return len;
}

/* One character of s as JSON text into out (at most 7 bytes); returns how many bytes of s. */
static size_t escape_one(const unsigned char *p, char *out, size_t *out_len) {
  static const char hex[] = "0123456789abcdef";
  if (*p == '"' || *p == '\\') {
    out[0] = '\\', out[1] = (char)*p, *out_len = 2;
    return 1;
  }
  if (*p < 0x20 || *p == 0x7f) {
    memcpy(out, "\\u00", 4), out[4] = hex[*p >> 4], out[5] = hex[*p & 15], *out_len = 6;
    return 1;
  }
  if (*p < 0x80) {
    out[0] = (char)*p, *out_len = 1;
    return 1;
  }
  size_t len = utf8_length(p);
  if (len) {
    memcpy(out, p, len), *out_len = len;
    return len;
  }
  /* Not UTF-8: the four characters \xNN (as cuparity_capture.py writes such bytes). */
  memcpy(out, "\\\\x", 3), out[3] = hex[*p >> 4], out[4] = hex[*p & 15], *out_len = 5;
  return 1;
}

/* A JSON string of at most `most` bytes of text (cut, and the line marked, beyond). */
static void put_string_at_most(struct line *l, const char *s, size_t most) {
  put(l, "\"", 1);
  size_t written = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    char e[8];
    size_t n;
    size_t used = escape_one(p, e, &n);
    if (l->n + n + k_reserve >= l->cap || written + n > most) {
      l->truncated = 1;
      break;
    }
    memcpy(l->text + l->n, e, n);
    l->n += n;
    written += n;
    p += used;
  }
  put(l, "\"", 1);
}

static void put_string(struct line *l, const char *s) {
  put_string_at_most(l, s, (size_t)-1);
}

static void put_key(struct line *l, const char *key) {
  if (l->n > 1)
    put(l, ",", 1);
  put_string(l, key);
  put(l, ":", 1);
}

static void put_member(struct line *l, const char *key, const char *value) {
  put_key(l, key);
  if (value)
    put_string(l, value);
  else
    puts_raw(l, "null");
}

static void put_number(struct line *l, const char *key, long long v) {
  char b[32];
  put_key(l, key);
  put(l, b, (size_t)snprintf(b, sizeof b, "%lld", v));
}

static void put_unsigned(struct line *l, const char *key, unsigned long long v) {
  char b[32];
  put_key(l, key);
  put(l, b, (size_t)snprintf(b, sizeof b, "%llu", v));
}

static void put_address(struct line *l, const char *key, const void *p) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", (unsigned long long)(uintptr_t)p);
  put_member(l, key, b);
}

static void write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return; /* the capture loses a line; the process goes on */
    s += w;
    n -= (size_t)w;
  }
}

/* Reads a small /proc file whole (cmdline, environ: NUL-separated). */
static size_t read_proc(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t n = 0;
  if (fd < 0)
    return 0;
  while (n < size) {
    ssize_t r = read(fd, buf + n, size - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  return n;
}

/* The variables that select a binding or its stream-0 mode, as the process started with them. */
static const char *const k_selection[] = {"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM",
                                          "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM",
                                          "NUMBA_CUDA_DRIVER",
                                          "NUMBA_CUDA_USE_NVIDIA_BINDING",
                                          "CUDA_VISIBLE_DEVICES",
                                          "LD_LIBRARY_PATH",
                                          "CUDA_MODULE_LOADING",
                                          0};

/* Each value is cut at 16 KiB: the seven fit a process line whole, with room left for argv. */
static void put_environment(struct line *l, char *buf, size_t n) {
  int first = 1;
  put_key(l, "environment");
  put(l, "{", 1);
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
    for (const char *const *v = k_selection; *v; ++v) {
      size_t len = strlen(*v);
      if (strncmp(buf + i, *v, len) == 0 && buf[i + len] == '=') {
        if (!first)
          put(l, ",", 1);
        first = 0;
        put_string(l, *v);
        put(l, ":", 1);
        put_string_at_most(l, buf + i + len + 1, 16 << 10);
      }
    }
  put(l, "}", 1);
}

/* The "process" line of this image. Called under g_opening, so the static buffers are safe. */
static void put_process_header(struct line *l, pid_t pid, int forked) {
  static char buf[1 << 20];
  char exe[4096];
  ssize_t e = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[e > 0 ? e : 0] = 0;
  puts_raw(l, "{");
  put_member(l, "event", "process");
  put_number(l, "pid", pid);
  put_number(l, "ppid", getppid());
  put_number(l, "forked", forked);
  put_member(l, "exe", exe);
  /* The environment before argv: the variables decide the audit, and argv may fill the line. */
  size_t n = read_proc("/proc/self/environ", buf, sizeof buf - 1);
  buf[n] = 0;
  put_environment(l, buf, n);
  n = read_proc("/proc/self/cmdline", buf, sizeof buf - 1);
  buf[n] = 0;
  put_key(l, "argv");
  put(l, "[", 1);
  /* Stops at the first cut argument: each further one would eat the room kept for the line's end
   * (100,000 arguments left a line that never closed, so the whole process was lost). */
  for (size_t i = 0; i < n && !l->truncated; i += strlen(buf + i) + 1) {
    if (i)
      put(l, ",", 1);
    put_string(l, buf + i);
  }
  put(l, "]", 1);
  if (l->truncated)
    put_number(l, "truncated", 1);
  put(l, "}\n", 2);
}

/* Whether fd is still the file this library opened (a program may close it and reuse the number).
 */
static int still_ours(int fd) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == g_fd_dev && st.st_ino == g_fd_ino;
}

enum { k_first_fd = 512, k_scanned = 64 };

/* Whether descriptor `fd` is a capture file of this folder (its file name into `name`). */
static int capture_file(int fd, char *name, size_t size) {
  char proc[64], link[sizeof g_real_dir + 64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(proc, link, sizeof link - 1);
  size_t d = strlen(g_real_dir);
  if (n <= 0)
    return 0;
  link[n] = 0;
  if (strncmp(link, g_real_dir, d) != 0 || strncmp(link + d, "/process-", 9) != 0)
    return 0;
  snprintf(name, size, "%s", link + d + 1);
  return 1;
}

/* A line in another process's file: this image loaded the library but cannot write its events
 * (its own file cannot be opened: another user after a fork, the folder not theirs). */
static void report_lost(int fd, pid_t pid, int error) {
  char text[8192], exe[4096];
  struct line l = {text, sizeof text, 0, 0};
  ssize_t e = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[e > 0 ? e : 0] = 0;
  puts_raw(&l, "{");
  put_member(&l, "event", "lost");
  put_number(&l, "pid", pid);
  put_number(&l, "ppid", getppid());
  put_number(&l, "uid", (long long)getuid());
  put_member(&l, "exe", exe);
  put_member(&l, "error", strerror(error));
  if (l.truncated)
    put_number(&l, "truncated", 1);
  put(&l, "}\n", 2);
  write_all(fd, l.text, l.n);
}

/* The descriptor this new image writes to: its own file, else the one the image before it (same
 * pid, before an exec) left open, which is the same file. The capture's descriptors are not
 * close-on-exec for this: `setpriv --reuid=...` execs as a user who cannot open a file in the
 * folder, yet appends through the inherited descriptor. Every other capture descriptor inherited
 * (the parent's) is closed, after a "lost" line through it when this image has no file at all. */
static int open_image_file(const char *path, pid_t pid, int parent_fd) {
  char own[64], name[64];
  snprintf(own, sizeof own, "process-%ld.jsonl", (long)pid);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  const int error = errno;
  int kept = -1, other = parent_fd;
  for (int i = k_first_fd; i < k_first_fd + k_scanned; ++i) {
    if (i == fd || i == parent_fd || fcntl(i, F_GETFD) < 0 || !capture_file(i, name, sizeof name))
      continue;
    if (fd < 0 && kept < 0 && strcmp(name, own) == 0)
      kept = i;
    else if (other < 0)
      other = i;
    else
      close(i);
  }
  if (fd < 0)
    fd = kept;
  if (fd < 0 && other >= 0)
    report_lost(other, pid, error);
  if (other >= 0)
    close(other);
  return fd;
}

/* The process's own file, opened at its first line, again after a fork, and again whenever the
 * program took the descriptor away. */
static int out_fd(void) {
  pid_t pid = getpid();
  if (g_fd_pid == pid && still_ours(g_fd))
    return g_fd;
  while (__atomic_exchange_n(&g_opening, 1, __ATOMIC_ACQUIRE))
    ;
  if (!(g_fd_pid == pid && still_ours(g_fd))) {
    const int new_image = g_fd_pid != pid; /* first line of this image, or of a fork child */
    const int forked = g_fd_pid != 0 && new_image;
    char path[sizeof g_dir + 64];
    snprintf(path, sizeof path, "%s/process-%ld.jsonl", g_dir, (long)pid);
    /* The parent's, inherited through fork: never a number the program reused. */
    const int parent_fd = forked && still_ours(g_fd) ? g_fd : -1;
    int fd = new_image ? open_image_file(path, pid, parent_fd)
                       : open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0 && fd < k_first_fd) { /* out of the way of the program's own descriptors */
      int high = fcntl(fd, F_DUPFD, k_first_fd);
      if (high >= 0) {
        close(fd);
        fd = high;
      }
    }
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
      g_fd_dev = st.st_dev;
      g_fd_ino = st.st_ino;
    }
    if (fd >= 0 && new_image) {
      static char header[1 << 18];
      struct line l = {header, sizeof header, 0, 0};
      put_process_header(&l, pid, forked);
      write_all(fd, l.text, l.n);
    }
    g_fd = fd;
    g_fd_pid = pid;
  }
  __atomic_store_n(&g_opening, 0, __ATOMIC_RELEASE);
  return g_fd;
}

static void emit(struct line *l) {
  if (l->truncated)
    put_number(l, "truncated", 1);
  put(l, "}\n", 2);
  int fd = out_fd();
  if (fd >= 0)
    write_all(fd, l->text, l->n);
}

/* ---- which objects are the driver ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int is_driver(const char *path) {
  const char *b = base_name(path);
  if (strncmp(b, "libcuda.so", 10) == 0)
    return 1;
  size_t len = strlen(b);
  for (const char *p = g_drivers; len && *p;) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *want = base_name(p);
    size_t wn = n - (size_t)(want - p);
    if (wn == len && strncmp(want, b, len) == 0)
      return 1;
    p += n + (end ? 1 : 0);
  }
  return 0;
}

static const char *object_name(const struct link_map *m) {
  return m && m->l_name && m->l_name[0] ? m->l_name : "";
}

/* ---- the cuGetProcAddress wrappers: one per driver loaded (up to four), per ABI ---- */

static void record_request(const char *abi, const char *symbol, void *answer, void *handed,
                           int version, unsigned long long flags, cu_result r, const int *status,
                           const void *caller) {
  char text[8192];
  struct line l = {text, sizeof text, 0, 0};
  Dl_info who, what;
  puts_raw(&l, "{");
  put_member(&l, "event", "proc");
  put_member(&l, "abi", abi);
  put_member(&l, "symbol", symbol);
  put_number(&l, "version", version);
  put_unsigned(&l, "flags", flags);
  put_number(&l, "result", r);
  if (status && r == 0) /* the driver writes symbolStatus when it answers */
    put_number(&l, "status", *status);
  put_address(&l, "pointer", answer);
  if (answer && dladdr(answer, &what)) {
    /* dladdr names the nearest symbol at or below: only an exact start names this pointer. */
    if (what.dli_sname && what.dli_saddr == answer)
      put_member(&l, "pointer_symbol", what.dli_sname);
    put_member(&l, "pointer_library", what.dli_fname ? what.dli_fname : "");
  }
  if (handed != answer)
    put_number(&l, "wrapped", 1);
  if (caller && dladdr(caller, &who) && who.dli_fname)
    put_member(&l, "caller", who.dli_fname);
  emit(&l);
}

static const char *answered_name(void *p) {
  Dl_info what;
  if (p && dladdr(p, &what) && what.dli_sname && what.dli_saddr == p)
    return what.dli_sname;
  return 0;
}

enum { k_slots = 4 };
static gpa_v1_fn g_real_v1[k_slots];
static gpa_v2_fn g_real_v2[k_slots];
static void *wrapper_for(void *p, const char *name);

/* What the caller gets for the driver's `answer` to a request for `symbol`: a wrapper when the
 * answer is cuGetProcAddress itself (cudart's self-request), else the answer. */
static void *hand_out(const char *symbol, void **pfn, void *answer) {
  if (!answer || !symbol || strncmp(symbol, "cuGetProcAddress", 16) != 0)
    return answer;
  void *handed = wrapper_for(answer, answered_name(answer));
  *pfn = handed;
  return handed;
}

#define CUPARITY_WRAPPERS(i)                                                                       \
  static cu_result wrap_v2_##i(const char *symbol, void **pfn, int version,                        \
                               unsigned long long flags, int *status) {                            \
    int own = 0;                                                                                   \
    int *st = status ? status : &own;                                                              \
    cu_result r = g_real_v2[i](symbol, pfn, version, flags, st);                                   \
    void *answer = (r == 0 && pfn) ? *pfn : 0;                                                     \
    void *handed = hand_out(symbol, pfn, answer);                                                  \
    record_request("cuGetProcAddress_v2", symbol, answer, handed, version, flags, r, st,           \
                   __builtin_return_address(0));                                                   \
    return r;                                                                                      \
  }                                                                                                \
  static cu_result wrap_v1_##i(const char *symbol, void **pfn, int version,                        \
                               unsigned long long flags) {                                         \
    cu_result r = g_real_v1[i](symbol, pfn, version, flags);                                       \
    void *answer = (r == 0 && pfn) ? *pfn : 0;                                                     \
    void *handed = hand_out(symbol, pfn, answer);                                                  \
    record_request("cuGetProcAddress", symbol, answer, handed, version, flags, r, 0,               \
                   __builtin_return_address(0));                                                   \
    return r;                                                                                      \
  }
CUPARITY_WRAPPERS(0)
CUPARITY_WRAPPERS(1)
CUPARITY_WRAPPERS(2)
CUPARITY_WRAPPERS(3)

static void *const k_wrap_v1[k_slots] = {(void *)wrap_v1_0, (void *)wrap_v1_1, (void *)wrap_v1_2,
                                         (void *)wrap_v1_3};
static void *const k_wrap_v2[k_slots] = {(void *)wrap_v2_0, (void *)wrap_v2_1, (void *)wrap_v2_2,
                                         (void *)wrap_v2_3};

/* The slot of `p` in `reals` (taking a free one for a new driver), or -1 when all are taken. */
static int slot_of(void *volatile *reals, void *p) {
  for (int i = 0; i < k_slots; ++i) {
    void *expected = 0;
    if (reals[i] == p ||
        __atomic_compare_exchange_n(&reals[i], &expected, p, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE) ||
        reals[i] == p)
      return i;
  }
  return -1;
}

/* The wrapper to hand out in place of the driver's `p`, or p itself. dladdr names the ABI the
 * driver answered with, so a request at 11030 gets a v1 wrapper and one at 12000 a v2. */
static void *wrapper_for(void *p, const char *name) {
  if (!p || !name)
    return p;
  if (strcmp(name, "cuGetProcAddress") == 0) {
    int i = slot_of((void *volatile *)g_real_v1, p);
    return i < 0 ? p : k_wrap_v1[i];
  }
  if (strcmp(name, "cuGetProcAddress_v2") == 0) {
    int i = slot_of((void *volatile *)g_real_v2, p);
    return i < 0 ? p : k_wrap_v2[i];
  }
  return p;
}

/* ---- the rtld-audit interface ---- */

EXPORT unsigned int la_version(unsigned int version) {
  const char *dir = getenv("CUPARITY_CAPTURE_DIR");
  const char *drivers = getenv("CUPARITY_CAPTURE_DRIVER");
  if (dir && *dir && strlen(dir) < sizeof g_dir) {
    strcpy(g_dir, dir);
    if (!realpath(g_dir, g_real_dir))
      strcpy(g_real_dir, g_dir);
    g_enabled = 1;
  }
  if (drivers && strlen(drivers) < sizeof g_drivers)
    strcpy(g_drivers, drivers);
  /* Without a folder to write to, the library stays loaded but asks for no binding at all. */
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie) {
  (void)cookie;
  if (!g_enabled)
    return 0;
  const char *name = object_name(map);
  int driver = name[0] && is_driver(name);
  if (name[0]) {
    char text[8192];
    struct line l = {text, sizeof text, 0, 0};
    puts_raw(&l, "{");
    put_member(&l, "event", "object");
    put_member(&l, "path", name);
    put_number(&l, "namespace", (long long)lmid);
    if (driver)
      put_number(&l, "driver", 1);
    emit(&l);
  }
  return LA_FLG_BINDFROM | (driver ? LA_FLG_BINDTO : 0);
}

EXPORT uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
                              uintptr_t *defcook, unsigned int *flags, const char *symname) {
  (void)ndx;
  void *address = (void *)sym->st_value;
  const struct link_map *from = (const struct link_map *)*refcook;
  const struct link_map *def = (const struct link_map *)*defcook;
  /* Only the driver asks for LA_FLG_BINDTO, yet rtld reports its own early lookups (malloc and
   * friends) here as well. */
  if (!is_driver(object_name(def)))
    return sym->st_value;
  /* dlvsym lookups carry LA_SYMB_DLSYM too: glibc has no flag of their own. */
  const char *via = (*flags & LA_SYMB_DLSYM) ? "dlsym" : "plt";
  void *handed = wrapper_for(address, symname);
  char text[8192];
  struct line l = {text, sizeof text, 0, 0};
  puts_raw(&l, "{");
  put_member(&l, "event", "bind");
  put_member(&l, "via", via);
  put_member(&l, "symbol", symname);
  put_member(&l, "library", object_name(def));
  put_address(&l, "pointer", address);
  /* The main program has no l_name: the reader names it from the process line's exe. */
  put_member(&l, "caller", object_name(from));
  if (handed != address)
    put_number(&l, "wrapped", 1);
  emit(&l);
  return (uintptr_t)handed;
}
