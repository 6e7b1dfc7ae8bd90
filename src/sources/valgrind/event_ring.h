/* The event ring: how weft's Valgrind tool hands the events of the program it
 * runs to the `weft record` process, which feeds them to the analyzers.
 *
 * Shared by the tool (freestanding C inside Valgrind) and weft (C++), so this
 * header is plain C with fixed-width types only.
 *
 * The ring is a file (in /dev/shm) that `weft record` creates and sizes and
 * that both processes map shared:
 *
 *   offset 0:            struct WeftRingHeader (one page)
 *   offset kHeaderBytes: block_count blocks of block_bytes each
 *
 * One producer (the tool; Valgrind runs one guest thread at a time, so the
 * events are already in one global order) and one consumer (weft). A block
 * starts with a u64 count of the 16-byte slots it holds, then the slots. The
 * producer fills block (produced % block_count) in place, stores its slot
 * count, then publishes it by incrementing `produced` (release); it waits
 * while produced - consumed == block_count. The consumer reads block
 * (consumed % block_count) once produced > consumed (acquire), then
 * increments `consumed`. A record never straddles two blocks.
 *
 * Slot = two u64 words {a, b}. The low 8 bits of b are the record type:
 *
 *   READ / WRITE   a = address; b = type | size << 8 (16 bits) | pc << 24 (40 bits)
 *   ATOMIC_WRITE   as WRITE: the write of an atomic instruction (a CAS, or a
 *                  store-conditional)
 *   SWITCH         a = weft thread id that runs from here on
 *   THREAD_START   a = weft thread id; b = type | (parent + 1) << 8 (32 bits)
 *                  + 2 slots: {start_routine, os_tid}, {time_ns, 0}
 *   THREAD_EXIT    a = weft thread id; + 1 slot {time_ns, control-flow events of the thread}
 *   SYNC           a = time_ns; b = type | SyncKind << 8 (16 bits) | pc << 24
 *                  + 2 slots: {object, arg0}, {arg1, 0}; applies to the running thread
 *   MAPS           a = byte length n; b = type; + ceil(n / 16) slots of text
 *                  (the /proc/self/maps of the Valgrind process, which is the
 *                  client's address space)
 *   BLOCK_COUNT    a = weft thread id; + 1 slot {control-flow events, 0}
 *                  (superblock entries of a thread still alive at the end)
 *   BLOCK          a = instructions of the block; b = type | pc << 24: the
 *                  running thread enters the guest block at pc (with
 *                  --weft-blocks=yes only)
 *   ALLOCATION     a = block address; b = type | pc << 24; + 1 slot {size, 0}:
 *                  the running thread's code allocated a heap block at pc
 *   RELEASE        a = address; b = type | size << 8 (56 bits): the running
 *                  thread releases heap memory [address, address + size)
 *   END            a = reason length n; b = type | complete << 8;
 *                  + ceil(n / 16) slots of reason text. The last record.
 */
#ifndef WEFT_SOURCES_VALGRIND_EVENT_RING_H
#define WEFT_SOURCES_VALGRIND_EVENT_RING_H

#include <stdint.h>

#define WEFT_RING_MAGIC 0x31474e5254464557ull /* "WEFTRNG1" little-endian */
#define WEFT_RING_HEADER_BYTES 4096u
#define WEFT_RING_SLOT_BYTES 16u

enum WeftRingRecordType {
  WEFT_REC_READ = 1,
  WEFT_REC_WRITE = 2,
  WEFT_REC_SWITCH = 3,
  WEFT_REC_THREAD_START = 4,
  WEFT_REC_THREAD_EXIT = 5,
  WEFT_REC_SYNC = 6,
  WEFT_REC_MAPS = 7,
  WEFT_REC_BLOCK_COUNT = 8,
  WEFT_REC_END = 9,
  WEFT_REC_BLOCK = 10,
  WEFT_REC_ALLOCATION = 11,
  WEFT_REC_ATOMIC_WRITE = 12,
  WEFT_REC_RELEASE = 13,
  WEFT_REC_DISTRIBUTION = 14,
};

#define WEFT_REC_PC_SHIFT 24
#define WEFT_REC_PC_MASK ((1ull << 40) - 1)
#define WEFT_REC_SIZE_MAX 0xffffu

typedef struct WeftRingSlot {
  uint64_t a;
  uint64_t b;
} WeftRingSlot;

typedef struct WeftRingHeader {
  uint64_t magic;
  uint64_t block_bytes; /* multiple of 16, at least 64 KiB */
  uint64_t block_count;
  uint64_t produced;      /* blocks published; written by the tool only */
  uint64_t consumed;      /* blocks read; written by weft only */
  uint64_t tool_attached; /* set to 1 by the tool once it has mapped the ring */
} WeftRingHeader;

#endif
