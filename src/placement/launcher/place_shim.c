// libweft-place.so: pins each thread of an unmodified program, in creation
// order, to the processing units WEFT_PLACE_CPUS lists for it (see README.md).
//
// Loaded with LD_PRELOAD. Plain C on libc and pthread only: the constructor
// parses the environment (the only allocations), pins the main thread to
// entry 0 and remembers the process's starting affinity; the interposed
// pthread_create numbers every new thread with a process-wide counter and
// starts it through a trampoline that pins it before its start routine runs.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WEFT_PLACE_EXPORT __attribute__((visibility("default")))

// The largest CPU index WEFT_PLACE_CPUS may name; beyond it the variable is
// malformed (a typo, not a machine).
enum { kMaxCpuIndex = 1 << 16 };
// Threads created but not yet started that can be in flight at once; more
// wait (sched_yield) for one of them to start.
enum { kHandoffSlots = 256 };

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

// One entry of WEFT_PLACE_CPUS: its CPUs as a set (sized set_size bytes),
// or the first CPU it names that is not online.
struct entry {
  cpu_set_t* set;
  long missing_cpu;  // -1 when every CPU of the entry is online
};

// What a creating thread hands the new thread's trampoline.
struct handoff {
  atomic_int busy;
  void* (*start)(void*);
  void* arg;
  unsigned long index;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static create_fn real_create;
static bool active;  // WEFT_PLACE_CPUS set and well formed
static bool log_pins;
static size_t set_size;        // bytes of every cpu set below
static cpu_set_t* start_set;   // the process's affinity before pinning
static bool have_start_set;    //   (when sched_getaffinity answered)
static cpu_set_t* online_set;  // the online CPUs (unknown: all allowed)
static bool have_online_set;
static struct entry* entries;
static unsigned long entry_count;
static atomic_ulong created;  // threads created so far, main excluded
static atomic_bool warned_unplanned;
// WEFT_PLACE_ROUTINES, copied and split at ';': entry K is "MODULE:0xVADDR",
// the start routine of the profile's thread K ("" unknown).
static char** routines;
static unsigned long routine_count;
static atomic_bool warned_routine;
static struct handoff handoffs[kHandoffSlots];

// One line on stderr, "weft place: " and the message, written at once.
__attribute__((format(printf, 1, 2))) static void say(const char* format, ...) {
  char line[512];
  int n = snprintf(line, sizeof line, "weft place: ");
  va_list ap;
  va_start(ap, format);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, format, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, len);
  (void)ignored;
}

// The set as a Linux cpulist ("0-3,8,10-11") into out (truncated to size).
static void format_set(const cpu_set_t* set, char* out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  long cpus = (long)(set_size * 8);
  for (long cpu = 0; cpu < cpus; ++cpu) {
    if (!CPU_ISSET_S((size_t)cpu, set_size, set)) continue;
    long last = cpu;
    while (last + 1 < cpus && CPU_ISSET_S((size_t)(last + 1), set_size, set)) ++last;
    int n = last == cpu
                ? snprintf(out + used, size - used, "%s%ld", used ? "," : "", cpu)
                : snprintf(out + used, size - used, "%s%ld-%ld", used ? "," : "", cpu, last);
    if (n < 0 || (size_t)n >= size - used) return;
    used += (size_t)n;
    cpu = last;
  }
}

// One item of a cpulist already checked or trusted, "N" or "N-M", at p;
// returns what follows it.
static const char* read_range(const char* p, long* first, long* last) {
  char* end;
  *first = *last = strtol(p, &end, 10);
  if (*end == '-') *last = strtol(end + 1, &end, 10);
  return end;
}

// A cpulist ("0-1,4") from a sysfs file into set; false when unreadable.
static bool read_cpulist_file(const char* path, cpu_set_t* set, long* highest) {
  char text[4096];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  const char* p = text;
  *highest = -1;
  while (*p >= '0' && *p <= '9') {
    long first, last;
    p = read_range(p, &first, &last);
    for (long cpu = first; cpu <= last && cpu < kMaxCpuIndex; ++cpu) {
      if (set && (size_t)cpu < set_size * 8) CPU_SET_S((size_t)cpu, set_size, set);
      if (cpu > *highest) *highest = cpu;
    }
    if (*p == ',') ++p;
  }
  return *highest >= 0;
}

// Parses WEFT_PLACE_CPUS into entries; on a malformed text, one warning and
// false. Two passes: the first checks the syntax and counts, the second
// fills the sets.
static bool parse_mapping(const char* text) {
  unsigned long count = 1;
  long highest = -1;
  const char* p = text;
  const char* problem = NULL;
  for (;;) {  // an entry: item (',' item)*, item: N or N-M with N <= M
    if (*p < '0' || *p > '9') {
      problem = "expected a cpu index";
      break;
    }
    char* end;
    errno = 0;
    long first = strtol(p, &end, 10), last = first;
    if (errno || first > kMaxCpuIndex) {
      problem = "cpu index too large";
      break;
    }
    p = end;
    if (*p == '-') {
      ++p;
      if (*p < '0' || *p > '9') {
        problem = "expected the last cpu index of a range";
        break;
      }
      last = strtol(p, &end, 10);
      if (errno || last > kMaxCpuIndex) {
        problem = "cpu index too large";
        break;
      }
      if (last < first) {
        problem = "range ends before it starts";
        break;
      }
      p = end;
    }
    if (last > highest) highest = last;
    if (*p == ',') {
      ++p;
    } else if (*p == ';') {
      ++p;
      ++count;
    } else if (*p == '\0') {
      break;
    } else {
      problem = "expected ',', ';' or the end";
      break;
    }
  }
  if (problem) {
    say("WEFT_PLACE_CPUS=\"%s\" is malformed at character %ld (%s); no thread is pinned", text,
        (long)(p - text) + 1, problem);
    return false;
  }

  // Sets large enough for the highest online CPU and the highest index named.
  long highest_possible = -1;
  read_cpulist_file("/sys/devices/system/cpu/possible", NULL, &highest_possible);
  long cpus = highest > highest_possible ? highest + 1 : highest_possible + 1;
  if (cpus < CPU_SETSIZE) cpus = CPU_SETSIZE;
  set_size = CPU_ALLOC_SIZE(cpus);

  // One allocation: entries, their sets, the start and online sets.
  size_t sets = count + 2;
  char* block = calloc(1, count * sizeof(struct entry) + sets * set_size);
  if (!block) {
    say("out of memory reading WEFT_PLACE_CPUS; no thread is pinned");
    return false;
  }
  entries = (struct entry*)block;
  char* set_memory = block + count * sizeof(struct entry);
  start_set = (cpu_set_t*)(set_memory + count * set_size);
  online_set = (cpu_set_t*)(set_memory + (count + 1) * set_size);
  long highest_online;
  have_online_set =
      read_cpulist_file("/sys/devices/system/cpu/online", online_set, &highest_online);
  have_start_set = sched_getaffinity(0, set_size, start_set) == 0;

  p = text;
  for (unsigned long k = 0; k < count; ++k) {
    struct entry* e = &entries[k];
    e->set = (cpu_set_t*)(set_memory + k * set_size);
    e->missing_cpu = -1;
    for (;;) {
      long first, last;
      p = read_range(p, &first, &last);
      for (long cpu = first; cpu <= last; ++cpu) {
        CPU_SET_S((size_t)cpu, set_size, e->set);
        if (have_online_set && e->missing_cpu < 0 &&
            !CPU_ISSET_S((size_t)cpu, set_size, online_set))
          e->missing_cpu = cpu;
      }
      if (*p != ',') break;
      ++p;
    }
    if (*p == ';') ++p;
  }
  entry_count = count;
  return true;
}

// Back to the affinity the process started with (a thread inherits its
// creator's, which may be pinned).
static void unpin_current(void) {
  if (have_start_set) sched_setaffinity(0, set_size, start_set);
}

// Pins the calling thread, thread `index` in creation order (0: main).
static void place_current(unsigned long index) {
  if (index >= entry_count) {
    if (!atomic_exchange(&warned_unplanned, true))
      say("thread %lu was not in the mapping (%lu threads planned); it and later ones run unpinned",
          index, entry_count);
    unpin_current();
    return;
  }
  const struct entry* e = &entries[index];
  char list[256];
  if (e->missing_cpu >= 0) {
    char online[256];
    format_set(online_set, online, sizeof online);
    say("thread %lu: cpu %ld does not exist on this machine (online: %s); it runs unpinned", index,
        e->missing_cpu, online);
    unpin_current();
    return;
  }
  if (sched_setaffinity(0, set_size, e->set) != 0) {
    int error = errno;
    format_set(e->set, list, sizeof list);
    say("thread %lu: pinning to cpus %s failed (sched_setaffinity: %s); it runs unpinned", index,
        list, strerror(error));
    unpin_current();
    return;
  }
  if (log_pins) {
    format_set(e->set, list, sizeof list);
    say("thread %lu -> cpus %s", index, list);
  }
}

// Splits WEFT_PLACE_ROUTINES into `routines` (one allocation each for the
// copy and the table; nothing on failure: the check is then skipped).
static void parse_routines(const char* text) {
  char* copy = strdup(text);
  if (!copy) return;
  unsigned long n = 1;
  for (const char* p = copy; *p; ++p) n += *p == ';';
  routines = calloc(n, sizeof *routines);
  if (!routines) {
    free(copy);
    return;
  }
  routines[0] = copy;
  for (char* p = copy; *p; ++p)
    if (*p == ';') {
      *p = '\0';
      routines[++routine_count] = p + 1;
    }
  ++routine_count;
}

// Thread `index` starts at `start`: warns once when the profile's thread
// of that rank started elsewhere (the run creates its threads otherwise,
// so creation order may not name the profiled threads).
static void check_routine(unsigned long index, void* (*start)(void*)) {
  // One warning says it all: later threads skip the loader's lock.
  if (index >= routine_count || routines[index][0] == '\0' ||
      atomic_load_explicit(&warned_routine, memory_order_relaxed))
    return;
  Dl_info info;
  struct link_map* map = NULL;
  if (!dladdr1((void*)start, &info, (void**)&map, RTLD_DL_LINKMAP) || !map || !info.dli_fname)
    return;
  // The file's own name, as /proc/PID/maps (and so the profile) has it:
  // libgomp.so.1.0.0, not the libgomp.so.1 link the loader opened.
  char path[PATH_MAX];
  const char* file = realpath(info.dli_fname, path) ? path : info.dli_fname;
  const char* slash = strrchr(file, '/');
  char actual[PATH_MAX + 32];
  snprintf(actual, sizeof actual, "%s:0x%lx", slash ? slash + 1 : file,
           (unsigned long)((uintptr_t)start - map->l_addr));
  if (strcmp(actual, routines[index]) == 0) return;
  if (!atomic_exchange(&warned_routine, true))
    say("thread %lu starts at %s, the profiled thread %lu at %s: this run creates its threads "
        "otherwise than the profiled one; threads are still pinned in creation order",
        index, actual, index, routines[index]);
}

static void initialize(void) {
  real_create = (create_fn)dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.34");
  if (!real_create) real_create = (create_fn)dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.2.5");
  if (!real_create) real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  const char* text = getenv("WEFT_PLACE_CPUS");
  if (!text) return;
  if (!real_create) {
    say("cannot find the real pthread_create; no thread is pinned");
    return;
  }
  const char* log = getenv("WEFT_PLACE_LOG");
  log_pins = log && *log && strcmp(log, "0") != 0;
  if (!parse_mapping(text)) return;
  const char* planned = getenv("WEFT_PLACE_ROUTINES");
  if (planned && *planned) parse_routines(planned);
  active = true;
  // The main thread is entry 0; initialize() runs in it unless another
  // library's constructor creates a thread before ours runs.
  if (syscall(SYS_gettid) == getpid())
    place_current(0);
  else
    say("started in a thread other than main; the main thread (entry 0) is not pinned");
}

__attribute__((constructor)) static void weft_place_load(void) { pthread_once(&once, initialize); }

static void* trampoline(void* data) {
  struct handoff* h = data;
  void* (*start)(void*) = h->start;
  void* arg = h->arg;
  unsigned long index = h->index;
  atomic_store_explicit(&h->busy, 0, memory_order_release);
  place_current(index);
  return start(arg);
}

static struct handoff* take_handoff(void) {
  for (;;) {
    for (int i = 0; i < kHandoffSlots; ++i) {
      int expected = 0;
      if (atomic_compare_exchange_strong_explicit(&handoffs[i].busy, &expected, 1,
                                                  memory_order_acquire, memory_order_relaxed))
        return &handoffs[i];
    }
    sched_yield();
  }
}

WEFT_PLACE_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                     void* (*start)(void*), void* arg) {
  pthread_once(&once, initialize);
  if (!real_create) return EAGAIN;
  if (!active) return real_create(thread, attr, start, arg);
  struct handoff* h = take_handoff();
  h->start = start;
  h->arg = arg;
  h->index = atomic_fetch_add(&created, 1) + 1;
  check_routine(h->index, start);
  int result = real_create(thread, attr, trampoline, h);
  if (result != 0) atomic_store_explicit(&h->busy, 0, memory_order_release);
  return result;
}
