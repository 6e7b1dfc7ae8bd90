/* weft's Valgrind tool: an event source and nothing else.
 *
 * It instruments the program's own code (not the system runtime libraries)
 * so that every memory effect becomes a READ or WRITE record, hands out weft
 * thread ids, answers the client requests of the preload library, and writes
 * all of it into the shared-memory ring of event_ring.h, which `weft record`
 * consumes and analyzes.
 *
 * Cost model: an access costs one helper call that writes one 16-byte slot
 * straight into the shared block. The helper's only test is `slot < limit`;
 * the rare conditions (block full, the running thread has no weft id yet,
 * another thread wrote the last record so a SWITCH is due) are folded into
 * that test by setting `fast_limit` to NULL, which sends the next access
 * through the slow path. Once nobody reads the ring, accesses go to a
 * scratch buffer instead, at the same cost.
 *
 * Links Valgrind's core (GPL-2) statically, so the tool binary is GPL-2. */

#include "../client_requests.h"
#include "../event_ring.h"
#include "libvex_guest_offsets.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* Core functions that have no tool header (libcoregrind exports them). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd,
                                                      Off64T offset);
extern SysRes VG_(do_syscall)(UWord sysno, UWord a1, UWord a2, UWord a3, UWord a4, UWord a5,
                              UWord a6, UWord a7, UWord a8);

/* A block is a u64 slot count, then the slots. */
#define BLOCK_SLOTS_OFFSET 8u
/* Effects larger than this go out as several records (ACCESS_RANGE's chunk). */
#define ACCESS_CHUNK_BYTES 32768u

/*------------------------------------------------------------------*/
/* Options                                                          */
/*------------------------------------------------------------------*/

static const HChar* clo_ring_path = NULL;
static Bool clo_blocks = False; /* BLOCK records for the imbalance analysis */

static Bool weft_process_option(const HChar* arg) {
  if VG_STR_CLO (arg, "--weft-ring", clo_ring_path) {
  } else if VG_BOOL_CLO (arg, "--weft-blocks", clo_blocks) {
  } else
    return False;
  return True;
}

static void weft_print_usage(void) {
  VG_(printf)("    --weft-ring=PATH          the event ring created by `weft record`\n");
  VG_(printf)("    --weft-blocks=yes|no      record block entries (control flow) [no]\n");
}

static void weft_print_debug_usage(void) {}

/* One line on stderr, then exit 1: `weft record` shows it as the cause. */
static void fail(const HChar* format, ...) PRINTF_CHECK(1, 2);
static void fail(const HChar* format, ...) {
  HChar line[512];
  va_list vargs;
  va_start(vargs, format);
  UInt n = VG_(vsnprintf)(line, sizeof(line) - 1, format, vargs);
  va_end(vargs);
  if (n > sizeof(line) - 2) n = sizeof(line) - 2;
  line[n] = '\n';
  VG_(write)(2, "weft: ", 6);
  VG_(write)(2, line, n + 1);
  VG_(exit)(1);
}

/*------------------------------------------------------------------*/
/* Ring producer                                                    */
/*------------------------------------------------------------------*/

static WeftRingHeader* ring;
static UChar* ring_blocks;
static ULong block_bytes, block_count;
static ULong produced;          /* our copy of ring->produced */
static UChar* block;            /* the block being filled */
static WeftRingSlot* block_end; /* one past its last slot */
static WeftRingSlot* next_slot; /* its first free slot */
/* block_end while the running thread may write accesses directly, NULL to
   route the next access through the slow path (see rearm_fast_path). */
static WeftRingSlot* fast_limit;
/* False before the ring is mapped, once the consumer is gone, and in a
   forked child (the ring has one producer); events are then dropped. */
static Bool producing = False;
static Int consumer_pid; /* our parent when we started: weft record */

static void rearm_fast_path(void);

static WeftRingSlot* first_slot(UChar* b) { return (WeftRingSlot*)(b + BLOCK_SLOTS_OFFSET); }

static ULong block_capacity(void) {
  return (block_bytes - BLOCK_SLOTS_OFFSET) / sizeof(WeftRingSlot);
}

static void map_ring(const HChar* path) {
  SysRes res = VG_(open)(path, VKI_O_RDWR, 0);
  if (sr_isError(res)) fail("cannot open the event ring %s", path);
  Int fd = (Int)sr_Res(res);

  WeftRingHeader h;
  struct vg_stat st;
  if (VG_(read)(fd, &h, sizeof(h)) != sizeof(h) || h.magic != WEFT_RING_MAGIC)
    fail("%s is not a weft event ring (bad magic)", path);
  if (h.block_bytes < 65536 || h.block_bytes % WEFT_RING_SLOT_BYTES != 0 || h.block_count == 0)
    fail("%s: bad ring geometry (block_bytes %llu, block_count %llu)", path, (ULong)h.block_bytes,
         (ULong)h.block_count);
  ULong total = WEFT_RING_HEADER_BYTES + h.block_bytes * h.block_count;
  if (VG_(fstat)(fd, &st) != 0 || (ULong)st.size < total)
    fail("%s is shorter than its header says (%llu bytes)", path, total);

  res = VG_(am_shared_mmap_file_float_valgrind)(total, VKI_PROT_READ | VKI_PROT_WRITE, fd, 0);
  VG_(close)(fd);
  if (sr_isError(res)) fail("cannot map the event ring %s (%llu bytes)", path, total);

  ring = (WeftRingHeader*)sr_Res(res);
  ring_blocks = (UChar*)ring + WEFT_RING_HEADER_BYTES;
  block_bytes = h.block_bytes;
  block_count = h.block_count;
  produced = __atomic_load_n(&ring->produced, __ATOMIC_ACQUIRE);
  consumer_pid = VG_(getppid)();
  __atomic_store_n(&ring->tool_attached, 1, __ATOMIC_RELEASE);
}

/* Waits until the block `produced` is free. False when the consumer is gone:
   weft record (our parent) died and we were reparented, to init or to a
   subreaper, so nobody would read on. */
static Bool wait_for_free_block(void) {
  for (UInt round = 0;; round++) {
    ULong consumed = __atomic_load_n(&ring->consumed, __ATOMIC_ACQUIRE);
    if (produced - consumed < block_count) return True;
    if (round % 64 == 63 && (VG_(getppid)() != consumer_pid || consumer_pid == 1)) return False;
    if (round < 1000) {
      VG_(do_syscall)(__NR_sched_yield, 0, 0, 0, 0, 0, 0, 0, 0);
    } else { /* a slow consumer: stop burning the core it needs */
      struct vki_timespec pause = {0, 100 * 1000};
      VG_(do_syscall)(__NR_nanosleep, (UWord)&pause, 0, 0, 0, 0, 0, 0, 0);
    }
  }
}

static void open_block(void) {
  if (!wait_for_free_block()) {
    producing = False;
    rearm_fast_path();
    return;
  }
  block = ring_blocks + (produced % block_count) * block_bytes;
  *(ULong*)block = 0; /* see note_progress: a stale count must not survive reuse */
  next_slot = first_slot(block);
  block_end = next_slot + block_capacity();
  rearm_fast_path();
}

static void publish_block(void) {
  *(ULong*)block = (ULong)(next_slot - first_slot(block));
  produced++;
  __atomic_store_n(&ring->produced, produced, __ATOMIC_RELEASE);
}

/* Stores the slot count of the block being filled, as publishing would.
   Called after each synchronization record: if the process is killed (no
   fini runs), weft reads the unpublished block up to here, so every access
   before the program's last synchronization is kept. */
static void note_progress(void) {
  if (producing)
    __atomic_store_n((ULong*)block, (ULong)(next_slot - first_slot(block)), __ATOMIC_RELEASE);
}

/* n contiguous slots (n <= block capacity), or NULL when not producing. */
static WeftRingSlot* take_slots(UInt n) {
  if (!producing) return NULL;
  if (next_slot + n > block_end) {
    publish_block();
    open_block();
    if (!producing) return NULL;
  }
  WeftRingSlot* s = next_slot;
  next_slot += n;
  return s;
}

static ULong now_ns(void) {
  struct vki_timespec ts;
  VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
  return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

/*------------------------------------------------------------------*/
/* Threads                                                          */
/*------------------------------------------------------------------*/

/* Per Valgrind thread slot. Valgrind reuses slots, so a slot is bound to a
   weft id from the thread's first event until its exit. */
typedef struct {
  Bool bound;
  Int weft_id;
  Int creator_weft_id; /* -1 when unknown */
  ULong blocks;        /* superblocks of program code entered */
} ThreadSlot;

static ThreadSlot* threads;  /* VG_N_THREADS entries, by ThreadId */
static Int next_weft_id = 1; /* 0 is the main thread's */
static Bool main_started = False;
static ThreadId running_tid = VG_INVALID_THREADID;
static Int last_emitter = -1; /* weft id of the thread the consumer believes runs */
/* Where the inline superblock counter adds: the running thread's `blocks`. */
static ULong spare_block_counter;
static ULong* running_blocks = &spare_block_counter;

/* Where accesses go once nothing is produced: dropping them costs no more
   than recording them. */
#define DISCARD_SLOTS 4096
static WeftRingSlot discard_slots[DISCARD_SLOTS];

/* A vtable-pointer store to drop (record_access_slow), armed by
   __tsan_vptr_update in a program built with weft-cc (vptr_update below);
   0 when none. While armed, every record takes the slow path. */
static Addr vptr_skip = 0;
static ThreadId vptr_skip_tid;
static UInt vptr_skip_left;
#define VPTR_SKIP_WINDOW 16 /* records within which the store must come */

static void rearm_fast_path(void) {
  if (!producing) {
    next_slot = discard_slots;
    fast_limit = discard_slots + DISCARD_SLOTS;
    return;
  }
  if (vptr_skip != 0) {
    fast_limit = NULL;
    return;
  }
  ThreadSlot* t = running_tid != VG_INVALID_THREADID ? &threads[running_tid] : NULL;
  fast_limit = t && t->bound && t->weft_id == last_emitter ? block_end : NULL;
}

/* THREAD_START binds the slot and is also the switch to that thread. */
static void start_thread(ThreadId tid, Int weft_id, Int parent, Addr start_routine, Int os_tid) {
  threads[tid].bound = True;
  threads[tid].weft_id = weft_id;
  WeftRingSlot* s = take_slots(3);
  if (s) {
    s[0].a = (ULong)weft_id;
    s[0].b = WEFT_REC_THREAD_START | (ULong)(UInt)(parent + 1) << 8;
    s[1].a = start_routine;
    s[1].b = (ULong)(Long)os_tid;
    s[2].a = now_ns();
    s[2].b = 0;
  }
  last_emitter = weft_id;
  rearm_fast_path();
}

/* The slot of tid, given the next weft id now if it had none. Runs in tid's
   context (its access or request), so gettid is its os tid. */
static ThreadSlot* bind(ThreadId tid) {
  ThreadSlot* t = &threads[tid];
  if (!t->bound) start_thread(tid, next_weft_id++, t->creator_weft_id, 0, VG_(gettid)());
  return t;
}

/* n slots for a record of thread tid, preceded by a SWITCH if the consumer
   believes another thread runs. NULL when not producing. */
static WeftRingSlot* reserve_for(ThreadId tid, UInt n) {
  ThreadSlot* t = bind(tid);
  if (last_emitter != t->weft_id) {
    WeftRingSlot* s = take_slots(1);
    if (s) {
      s->a = (ULong)t->weft_id;
      s->b = WEFT_REC_SWITCH;
    }
    last_emitter = t->weft_id;
  }
  WeftRingSlot* s = take_slots(n);
  rearm_fast_path();
  return s;
}

static void emit_thread_exit(ThreadId tid) {
  ThreadSlot* t = &threads[tid];
  WeftRingSlot* s = reserve_for(tid, 2);
  if (s) {
    s[0].a = (ULong)t->weft_id;
    s[0].b = WEFT_REC_THREAD_EXIT;
    s[1].a = now_ns();
    s[1].b = t->blocks;
    note_progress();
  }
}

static void weft_start_client_code(ThreadId tid, ULong blocks_dispatched) {
  running_tid = tid;
  running_blocks = &threads[tid].blocks;
  if (!main_started) {
    main_started = True;
    start_thread(tid, 0, -1, 0, VG_(gettid)());
  }
  rearm_fast_path();
}

/* Valgrind's thread table has VG_N_THREADS slots (slot 0 unused) and
   panics when a new thread finds none free. A pthread_create would then
   rather fail with EAGAIN (the preload library's wrapper returns it when
   the reservation is refused), as it does natively when out of resources:
   the program goes on, its output kept. `pending_threads`: reservations
   whose thread does not exist yet; `refused_threads`: creations refused. */
static UInt pending_threads = 0;
static ULong refused_threads = 0;

/* Slots not empty: live threads, and exited ones not yet cleared. */
static UInt occupied_thread_slots(void) {
  ThreadId tid;
  Addr lo, hi;
  UInt n = 0;
  VG_(thread_stack_reset_iter)(&tid);
  while (VG_(thread_stack_next)(&tid, &lo, &hi)) n++;
  return n;
}

static UWord reserve_thread(void) {
  if (occupied_thread_slots() + pending_threads + 1 > VG_N_THREADS - 1) {
    refused_threads++;
    return WEFT_NO_THREAD_ID;
  }
  pending_threads++;
  return (UWord)next_weft_id++;
}

static void weft_thread_created(ThreadId parent, ThreadId child) {
  ThreadSlot* p = &threads[parent];
  ThreadSlot* c = &threads[child];
  if (pending_threads > 0) pending_threads--;
  c->bound = False;
  c->creator_weft_id = p->bound ? p->weft_id : -1;
  c->blocks = 0;
}

static void weft_thread_exited(ThreadId tid) {
  ThreadSlot* t = &threads[tid];
  if (t->bound) emit_thread_exit(tid);
  t->bound = False;
  t->blocks = 0;
  rearm_fast_path();
}

/* A successful exec ends the tool without fini: hand over what we have. */
static void weft_pre_syscall(ThreadId tid, UInt syscall_no, UWord* args, UInt n_args) {
  if ((syscall_no == __NR_execve || syscall_no == __NR_execveat) && producing &&
      next_slot > first_slot(block)) {
    publish_block();
    open_block();
  }
}

static void weft_post_syscall(ThreadId tid, UInt syscall_no, UWord* args, UInt n_args, SysRes res) {
}

static void weft_fork_child(ThreadId tid) {
  producing = False; /* the parent keeps the ring */
  rearm_fast_path();
}

/*------------------------------------------------------------------*/
/* Which code is the program's                                      */
/*------------------------------------------------------------------*/

/* Objects whose accesses are not the program's: the system runtime, which
   weft's compile-time source does not instrument either. */
static const HChar* const runtime_prefixes[] = {
    "ld-linux",   "ld-",         "libc.so",     "libc-",     "libm.so",    "libm-",   "libmvec",
    "libpthread", "libdl",       "librt",       "libgomp",   "libomp",     "libiomp", "libstdc++",
    "libgcc_s",   "libgfortran", "libquadmath", "libatomic", "vgpreload_",
};

static Bool starts_with(const HChar* s, const HChar* prefix) {
  return VG_(strncmp)(s, prefix, VG_(strlen)(prefix)) == 0;
}

static const HChar* base_name(const HChar* path) {
  const HChar* slash = VG_(strrchr)(path, '/');
  return slash ? slash + 1 : path;
}

static Bool is_runtime_object(const HChar* path) {
  const HChar* base = base_name(path);
  if (base[0] == '[') return True;
  for (UInt i = 0; i < sizeof(runtime_prefixes) / sizeof(runtime_prefixes[0]); i++)
    if (starts_with(base, runtime_prefixes[i])) return True;
  return False;
}

/* A program built with weft-cc carries weft's compile-time runtime
   (libweft-rt, dormant under Valgrind) and its hooks (the ThreadSanitizer
   and coverage entry points, linked into the program): weft's code, not the
   program's, whose own accesses (the runtime's globals, a vtable pointer
   the hook compares) a plain build does not make. Except the atomics of the
   ThreadSanitizer ABI, which perform the program's atomic operations (inline
   instructions in a plain build). */
static Bool is_weft_code(const HChar* file, Addr pc) {
  const Bool runtime = file != NULL && starts_with(base_name(file), "libweft-rt");
  const HChar* name = NULL;
  if (!VG_(get_fnname)(VG_(current_DiEpoch)(), pc, &name)) return runtime;
  if (starts_with(name, "__tsan_atomic")) return False;
  return runtime || starts_with(name, "__tsan_") || starts_with(name, "__sanitizer_cov_");
}

/* The object is named by the DebugInfo covering pc. A DebugInfo covers only
   .text, so the .plt stubs of an object (libgomp calls libc through dozens)
   are named by the file mapped there instead. Code of no file (JIT code)
   counts as the program's. */
static Bool is_program_pc(Addr pc) {
  DebugInfo* di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), pc);
  const HChar* file = NULL;
  if (di) {
    file = VG_(DebugInfo_get_filename)(di);
  } else {
    NSegment const* seg = VG_(am_find_nsegment)(pc);
    if (seg) file = VG_(am_get_filename)(seg);
  }
  return file == NULL || (!is_runtime_object(file) && !is_weft_code(file, pc));
}

/*------------------------------------------------------------------*/
/* Instrumentation                                                  */
/*------------------------------------------------------------------*/

static ULong pack_access(UInt type, ULong size, Addr pc) {
  return type | size << 8 | ((ULong)pc & WEFT_REC_PC_MASK) << WEFT_REC_PC_SHIFT;
}

/* Binds the thread, writes a SWITCH or moves to the next block as needed;
   drops the vtable-pointer store vptr_skip stands for. */
static __attribute__((noinline)) void record_access_slow(Addr addr, ULong type_size_pc) {
  if (vptr_skip != 0) {
    const Bool same_thread = running_tid == vptr_skip_tid;
    const Bool store =
        same_thread && addr == vptr_skip &&
        (type_size_pc & ((1ull << WEFT_REC_PC_SHIFT) - 1)) == pack_access(WEFT_REC_WRITE, 8, 0);
    if (store || !same_thread || --vptr_skip_left == 0) {
      vptr_skip = 0;
      rearm_fast_path();
    }
    if (store) return;
  }
  WeftRingSlot* s = reserve_for(running_tid, 1);
  if (s) {
    s->a = addr;
    s->b = type_size_pc;
  }
}

/* Called from generated code for every access of program code; kept a leaf
   (the slow path is a tail call) so that it saves no registers. */
static VG_REGPARM(2) void record_access(Addr addr, ULong type_size_pc) {
  WeftRingSlot* s = next_slot;
  if (UNLIKELY(s >= fast_limit)) {
    record_access_slow(addr, type_size_pc);
    return;
  }
  s->a = addr;
  s->b = type_size_pc;
  next_slot = s + 1;
}

/* A store of a vtable pointer (C++ constructors and destructors) is a write
   only when it changes the pointer, as ThreadSanitizer's __tsan_vptr_update
   counts it (and so the compile-time source): a destructor re-storing its
   own class's vtable is not a write another thread could observe. Stores of
   other constant pointers into read-only data fall under the same rule.
   Runs before the store. */
static VG_REGPARM(3) void record_vptr_store(Addr addr, ULong type_size_pc, ULong vptr) {
  if (*(const ULong*)addr != vptr) record_access(addr, type_size_pc);
}

/* True when the constant `value` points into read-only data of a mapped
   file: where vtables live (.data.rel.ro, made read-only after relocation,
   or .rodata). Valgrind's data-symbol lookup does not cover .data.rel.ro,
   so the mapping, not the _ZTV name, identifies them. */
static Bool is_vtable_address(ULong value) {
  NSegment const* seg = VG_(am_find_nsegment)((Addr)value);
  return seg && seg->kind == SkFileC && seg->hasR && !seg->hasW && !seg->hasX;
}

/* A call recording `size` bytes at `addr` (an IR atom), under `guard` if
   not NULL, split into records of at most ACCESS_CHUNK_BYTES. */
static void add_access(IRSB* sb, UInt type, IRExpr* addr, ULong size, Addr pc, IRExpr* guard) {
  for (ULong done = 0; done < size; done += ACCESS_CHUNK_BYTES) {
    ULong n = size - done < ACCESS_CHUNK_BYTES ? size - done : ACCESS_CHUNK_BYTES;
    IRExpr* chunk_addr = addr;
    if (done > 0) {
      IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
      addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Binop(Iop_Add64, addr, mkIRExpr_HWord(done))));
      chunk_addr = IRExpr_RdTmp(t);
    }
    IRDirty* di =
        unsafeIRDirty_0_N(2, "weft_record_access", VG_(fnptr_to_fnentry)(record_access),
                          mkIRExprVec_2(chunk_addr, mkIRExpr_HWord(pack_access(type, n, pc))));
    if (guard) di->guard = guard;
    addStmtToIRSB(sb, IRStmt_Dirty(di));
  }
}

/* ++*running_blocks, inline: cheaper than a helper call per superblock. */
static void add_block_count(IRSB* sb) {
  IRTemp counter = newIRTemp(sb->tyenv, Ity_I64);
  IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
  IRTemp new = newIRTemp(sb->tyenv, Ity_I64);
  addStmtToIRSB(sb, IRStmt_WrTmp(counter, IRExpr_Load(Iend_LE, Ity_I64,
                                                      mkIRExpr_HWord((HWord)&running_blocks))));
  addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, IRExpr_RdTmp(counter))));
  addStmtToIRSB(sb, IRStmt_WrTmp(new, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                                   IRExpr_Const(IRConst_U64(1)))));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(counter), IRExpr_RdTmp(new)));
}

/* With --weft-blocks: a BLOCK record where the guest block starting at the
   IMark stmts[from] begins (the superblock's start, or the fall-through of a
   side exit), carrying its instruction count: the IMarks up to the next side
   exit. */
static void add_block_entry(IRSB* sb, IRSB* sb_in, Int from) {
  Addr start = 0;
  ULong instructions = 0;
  for (Int k = from; k < sb_in->stmts_used; k++) {
    IRStmt* st = sb_in->stmts[k];
    if (st->tag == Ist_Exit) break;
    if (st->tag != Ist_IMark) continue;
    if (instructions++ == 0) start = (Addr)st->Ist.IMark.addr;
  }
  if (instructions == 0) return;
  IRDirty* di = unsafeIRDirty_0_N(
      2, "weft_record_block", VG_(fnptr_to_fnentry)(record_access),
      mkIRExprVec_2(
          mkIRExpr_HWord(instructions),
          mkIRExpr_HWord(WEFT_REC_BLOCK | ((ULong)start & WEFT_REC_PC_MASK) << WEFT_REC_PC_SHIFT)));
  addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* In a program built with weft-cc the instrumentation calls
   __tsan_vptr_update(vptr_p, value) before each vtable-pointer store, whose
   value then comes from a register: record_vptr_store cannot see it is the
   vtable already there. Runs at the hook's entry: when the pointer does not
   change, the thread's next 8-byte write to vptr_p (within a few records)
   is not recorded, as ThreadSanitizer and the compile-time source count it. */
static void vptr_update(Addr vptr_p, ULong value) {
  if (*(const ULong*)vptr_p != value) return;
  vptr_skip = vptr_p;
  vptr_skip_tid = running_tid;
  vptr_skip_left = VPTR_SKIP_WINDOW;
  rearm_fast_path();
}

static Bool is_vptr_update_entry(Addr pc) {
  const HChar* name = NULL;
  return VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), pc, &name) &&
         VG_(strcmp)(name, "__tsan_vptr_update") == 0;
}

/* A call of vptr_update on the hook's arguments (rdi, rsi), at its entry. */
static void add_vptr_update(IRSB* sb) {
  IRTemp vptr_p = newIRTemp(sb->tyenv, Ity_I64), value = newIRTemp(sb->tyenv, Ity_I64);
  addStmtToIRSB(sb, IRStmt_WrTmp(vptr_p, IRExpr_Get(OFFSET_amd64_RDI, Ity_I64)));
  addStmtToIRSB(sb, IRStmt_WrTmp(value, IRExpr_Get(OFFSET_amd64_RSI, Ity_I64)));
  IRDirty* di = unsafeIRDirty_0_N(0, "weft_vptr_update", VG_(fnptr_to_fnentry)(vptr_update),
                                  mkIRExprVec_2(IRExpr_RdTmp(vptr_p), IRExpr_RdTmp(value)));
  addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* A superblock may go on into code VEX chased a jump or a call to: each of
   its extents (at most 3) is the program's or not on its own. */
typedef struct {
  Bool program[3];
  Bool any;
} ExtentKinds;

static ExtentKinds extent_kinds(const VexGuestExtents* vge) {
  ExtentKinds k = {{False, False, False}, False};
  for (UInt e = 0; e < vge->n_used && e < 3; e++) {
    k.program[e] = is_program_pc(vge->base[e]);
    k.any = k.any || k.program[e];
  }
  return k;
}

static Bool in_program_extent(const VexGuestExtents* vge, const ExtentKinds* k, Addr pc) {
  for (UInt e = 0; e < vge->n_used && e < 3; e++)
    if (pc >= vge->base[e] && pc < vge->base[e] + vge->len[e]) return k->program[e];
  return True;
}

static Bool is_extent_start(const VexGuestExtents* vge, Addr pc) {
  for (UInt e = 0; e < vge->n_used && e < 3; e++)
    if (pc == vge->base[e]) return True;
  return False;
}

static IRSB* weft_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                             const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                             IRType guest_word, IRType host_word) {
  if (guest_word != Ity_I64 || host_word != Ity_I64) VG_(tool_panic)("weft: 64-bit only");
  /* Decided once per extent: runtime code is passed through as is (but for
     the vptr_update call at __tsan_vptr_update's entry). */
  const ExtentKinds kinds = extent_kinds(vge);
  if (!kinds.any && !is_vptr_update_entry(vge->base[0])) return sb_in;

  IRTypeEnv* tyenv = sb_in->tyenv;
  IRSB* sb = deepCopyIRSBExceptStmts(sb_in);
  Int i = 0;
  for (; i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark; i++)
    addStmtToIRSB(sb, sb_in->stmts[i]);
  if (kinds.program[0]) {
    add_block_count(sb);
    if (clo_blocks) add_block_entry(sb, sb_in, i);
  }

  Addr pc = 0;
  /* The last plain load of the current instruction: VEX turns `lock add`
     and friends into that load followed by a CAS of the same location, and
     the load already is the CAS's read. */
  IRExpr* load_addr = NULL;
  ULong load_size = 0;
  Bool recording = True;
  for (; i < sb_in->stmts_used; i++) {
    IRStmt* st = sb_in->stmts[i];
    if (st->tag == Ist_IMark) {
      pc = (Addr)st->Ist.IMark.addr;
      load_addr = NULL;
      recording = in_program_extent(vge, &kinds, pc);
      addStmtToIRSB(sb, st);
      if (!recording && is_extent_start(vge, pc) && is_vptr_update_entry(pc)) add_vptr_update(sb);
      continue;
    }
    if (!recording) {
      addStmtToIRSB(sb, st);
      continue;
    }
    switch (st->tag) {
      case Ist_WrTmp: {
        IRExpr* data = st->Ist.WrTmp.data;
        if (data->tag == Iex_Load) {
          load_addr = data->Iex.Load.addr;
          load_size = sizeofIRType(data->Iex.Load.ty);
          add_access(sb, WEFT_REC_READ, load_addr, load_size, pc, NULL);
        }
        break;
      }
      case Ist_Store: {
        IRExpr* data = st->Ist.Store.data;
        if (data->tag == Iex_Const && data->Iex.Const.con->tag == Ico_U64 &&
            is_vtable_address(data->Iex.Const.con->Ico.U64)) {
          IRDirty* di = unsafeIRDirty_0_N(
              3, "weft_record_vptr_store", VG_(fnptr_to_fnentry)(record_vptr_store),
              mkIRExprVec_3(st->Ist.Store.addr, mkIRExpr_HWord(pack_access(WEFT_REC_WRITE, 8, pc)),
                            data));
          addStmtToIRSB(sb, IRStmt_Dirty(di));
          break;
        }
        add_access(sb, WEFT_REC_WRITE, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(tyenv, data)),
                   pc, NULL);
        break;
      }
      case Ist_LoadG: {
        IRLoadG* lg = st->Ist.LoadG.details;
        IRType loaded = Ity_INVALID, widened = Ity_INVALID;
        typeOfIRLoadGOp(lg->cvt, &widened, &loaded);
        add_access(sb, WEFT_REC_READ, lg->addr, sizeofIRType(loaded), pc, lg->guard);
        break;
      }
      case Ist_StoreG: {
        IRStoreG* sg = st->Ist.StoreG.details;
        add_access(sb, WEFT_REC_WRITE, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), pc,
                   sg->guard);
        break;
      }
      case Ist_CAS: { /* read then write; a double CAS covers both halves */
        IRCAS* cas = st->Ist.CAS.details;
        ULong size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
        if (cas->dataHi) size *= 2;
        if (!(load_addr && load_size == size && eqIRAtom(load_addr, cas->addr)))
          add_access(sb, WEFT_REC_READ, cas->addr, size, pc, NULL);
        add_access(sb, WEFT_REC_ATOMIC_WRITE, cas->addr, size, pc, NULL);
        break;
      }
      case Ist_LLSC:
        if (st->Ist.LLSC.storedata == NULL)
          add_access(sb, WEFT_REC_READ, st->Ist.LLSC.addr,
                     sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), pc, NULL);
        else
          add_access(sb, WEFT_REC_ATOMIC_WRITE, st->Ist.LLSC.addr,
                     sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)), pc, NULL);
        break;
      case Ist_Dirty: {
        IRDirty* d = st->Ist.Dirty.details;
        /* The effect happens only when the dirty call itself does. */
        IRExpr* guard = d->guard;
        if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
          add_access(sb, WEFT_REC_READ, d->mAddr, (ULong)d->mSize, pc, guard);
        if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
          add_access(sb, WEFT_REC_WRITE, d->mAddr, (ULong)d->mSize, pc, guard);
        break;
      }
      case Ist_Exit:
        if (clo_blocks) {
          addStmtToIRSB(sb, st);
          add_block_entry(sb, sb_in, i + 1);
          continue;
        }
        break;
      default:
        break;
    }
    addStmtToIRSB(sb, st);
  }
  return sb;
}

/*------------------------------------------------------------------*/
/* Client requests                                                  */
/*------------------------------------------------------------------*/

static void emit_access_range(ThreadId tid, Addr pc, Addr addr, ULong size, Bool is_write) {
  for (ULong done = 0; done < size; done += ACCESS_CHUNK_BYTES) {
    ULong n = size - done < ACCESS_CHUNK_BYTES ? size - done : ACCESS_CHUNK_BYTES;
    WeftRingSlot* s = reserve_for(tid, 1);
    if (!s) return;
    s->a = addr + done;
    s->b = pack_access(is_write ? WEFT_REC_WRITE : WEFT_REC_READ, n, pc);
  }
}

static void emit_sync(ThreadId tid, UWord kind, Addr pc, UWord object, UWord arg0, UWord arg1) {
  WeftRingSlot* s = reserve_for(tid, 3);
  if (!s) return;
  s[0].a = now_ns();
  s[0].b = WEFT_REC_SYNC | (ULong)(kind & 0xffff) << 8 |
           ((ULong)pc & WEFT_REC_PC_MASK) << WEFT_REC_PC_SHIFT;
  s[1].a = object;
  s[1].b = arg0;
  s[2].a = arg1;
  s[2].b = 0;
  note_progress();
}

static void emit_release(ThreadId tid, Addr address, UWord size) {
  WeftRingSlot* s = reserve_for(tid, 1);
  if (!s) return;
  s->a = address;
  s->b = WEFT_REC_RELEASE | (ULong)size << 8;
}

/* A declared distribution: three slots (base; element size, count; block,
   kind << 32 | threads). */
static void emit_distribution(ThreadId tid, const UWord* args) {
  WeftRingSlot* s = reserve_for(tid, 3);
  if (!s) return;
  s[0].a = args[1];
  s[0].b = WEFT_REC_DISTRIBUTION;
  s[1].a = args[2];
  s[1].b = args[3];
  s[2].a = args[4];
  s[2].b = args[5];
}

static void emit_allocation(ThreadId tid, Addr pc, Addr address, UWord size) {
  WeftRingSlot* s = reserve_for(tid, 2);
  if (!s) return;
  s[0].a = address;
  s[0].b = WEFT_REC_ALLOCATION | ((ULong)pc & WEFT_REC_PC_MASK) << WEFT_REC_PC_SHIFT;
  s[1].a = size;
  s[1].b = 0;
}

/* The preload library's pthread_create wrapper reserved weft_id; the new
   thread announces itself before running its start routine. */
static void request_thread_start(ThreadId tid, Int weft_id, Int parent, Addr start_routine,
                                 Int os_tid) {
  ThreadSlot* t = &threads[tid];
  if (t->bound && t->weft_id == weft_id) return;
  if (t->bound) { /* it already got an id of its own: close that one */
    emit_thread_exit(tid);
    t->blocks = 0;
  }
  if (weft_id >= next_weft_id) next_weft_id = weft_id + 1;
  start_thread(tid, weft_id, parent, start_routine, os_tid);
}

static Bool weft_handle_request(ThreadId tid, UWord* args, UWord* ret) {
  if (!VG_IS_TOOL_USERREQ('W', 'F', args[0])) return False;
  *ret = 0;
  switch (args[0]) {
    case WEFT_REQ_HELLO:
      *ret = 1;
      break;
    case WEFT_REQ_CURRENT_THREAD:
      *ret = (UWord)bind(tid)->weft_id;
      rearm_fast_path();
      break;
    case WEFT_REQ_RESERVE_THREAD:
      *ret = reserve_thread();
      break;
    case WEFT_REQ_CANCEL_THREAD:
      if (pending_threads > 0) pending_threads--;
      break;
    case WEFT_REQ_RELEASE:
      emit_release(tid, args[1], args[2]);
      break;
    case WEFT_REQ_THREAD_START:
      request_thread_start(tid, (Int)args[1], (Int)args[2] - 1, args[3], (Int)args[4]);
      break;
    case WEFT_REQ_SYNC:
      emit_sync(tid, args[1], args[2], args[3], args[4], args[5]);
      break;
    case WEFT_REQ_ACCESS_RANGE:
      emit_access_range(tid, args[1], args[2], args[3], args[4] != 0);
      break;
    case WEFT_REQ_IS_PROGRAM_PC:
      *ret = is_program_pc(args[1]);
      break;
    case WEFT_REQ_THREAD_COUNT:
      *ret = (UWord)next_weft_id;
      break;
    case WEFT_REQ_ALLOCATION:
      emit_allocation(tid, args[1], args[2], args[3]);
      break;
    case WEFT_REQ_DISTRIBUTION:
      emit_distribution(tid, args);
      break;
    default:
      return False;
  }
  return True;
}

/*------------------------------------------------------------------*/
/* Start and end                                                    */
/*------------------------------------------------------------------*/

/* A record followed by `n` bytes of text, which must fit one block. */
static void emit_text_record(UInt type, ULong flags, const HChar* text, ULong n) {
  WeftRingSlot* s = take_slots(1 + (UInt)((n + 15) / 16));
  if (!s) return;
  s[0].a = n;
  s[0].b = type | flags << 8;
  VG_(memcpy)(s + 1, text, n);
}

/* The address map, so that weft can name the code behind the pcs. */
static void emit_maps(void) {
  SysRes res = VG_(open)("/proc/self/maps", VKI_O_RDONLY, 0);
  if (sr_isError(res)) return;
  Int fd = (Int)sr_Res(res);
  ULong max = (block_capacity() - 1) * sizeof(WeftRingSlot);
  HChar* text = VG_(malloc)("weft.maps", max);
  ULong n = 0;
  Bool truncated = False;
  while (True) {
    if (n == max) { /* full: keep whole lines only */
      HChar probe;
      truncated = VG_(read)(fd, &probe, 1) > 0;
      break;
    }
    Int got = VG_(read)(fd, text + n, (Int)(max - n < 65536 ? max - n : 65536));
    if (got <= 0) break;
    n += (ULong)got;
  }
  VG_(close)(fd);
  if (truncated)
    while (n > 0 && text[n - 1] != '\n') n--;
  emit_text_record(WEFT_REC_MAPS, 0, text, n);
  VG_(free)(text);
}

static void weft_post_clo_init(void) {
  if (clo_ring_path == NULL || clo_ring_path[0] == '\0')
    fail("--weft-ring=PATH is required (the tool is run by `weft record`)");
  threads = VG_(calloc)("weft.threads", VG_N_THREADS, sizeof(ThreadSlot));
  for (UInt i = 0; i < VG_N_THREADS; i++) threads[i].creator_weft_id = -1;
  map_ring(clo_ring_path);
  producing = True;
  open_block();
}

static void weft_fini(Int exit_code) {
  if (!producing) return;
  for (ThreadId tid = 1; tid < VG_N_THREADS; tid++) {
    if (!threads[tid].bound) continue;
    WeftRingSlot* s = take_slots(2);
    if (!s) return;
    s[0].a = (ULong)threads[tid].weft_id;
    s[0].b = WEFT_REC_BLOCK_COUNT;
    s[1].a = threads[tid].blocks;
    s[1].b = 0;
  }
  emit_maps();
  if (refused_threads == 0) {
    emit_text_record(WEFT_REC_END, 1 /* complete */, "", 0);
  } else {
    HChar reason[256];
    VG_(snprintf)
    (reason, sizeof reason,
     "Valgrind's thread table (%u threads at once) was full: %llu thread "
     "creation%s failed with EAGAIN (a larger --max-threads gives Valgrind more)",
     VG_N_THREADS - 1, refused_threads, refused_threads == 1 ? "" : "s");
    emit_text_record(WEFT_REC_END, 0, reason, VG_(strlen)(reason));
  }
  if (producing) publish_block();
}

static void weft_pre_clo_init(void) {
  VG_(details_name)("weft");
  VG_(details_version)(NULL);
  VG_(details_description)("the event source of the weft profiler");
  VG_(details_copyright_author)
  ("Copyright (C) the weft authors; GNU GPL'd (links Valgrind's core).");
  VG_(details_bug_reports_to)("the weft authors");
  VG_(details_avg_translation_sizeB)(400);

  VG_(basic_tool_funcs)(weft_post_clo_init, weft_instrument, weft_fini);
  VG_(needs_command_line_options)(weft_process_option, weft_print_usage, weft_print_debug_usage);
  VG_(needs_client_requests)(weft_handle_request);
  VG_(needs_syscall_wrapper)(weft_pre_syscall, weft_post_syscall);
  VG_(track_start_client_code)(weft_start_client_code);
  VG_(track_pre_thread_ll_create)(weft_thread_created);
  VG_(track_pre_thread_ll_exit)(weft_thread_exited);
  VG_(atfork)(NULL, NULL, weft_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(weft_pre_clo_init)
