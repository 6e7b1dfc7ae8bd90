/* Client requests: how code running inside the program under Valgrind (the
 * preload library with weft's shared interposers) talks to weft's tool.
 * Shared by the preload library (C++) and the tool (C). Unknown requests
 * return their default value, so a program not under weft's tool sees 0. */
#ifndef WEFT_SOURCES_VALGRIND_CLIENT_REQUESTS_H
#define WEFT_SOURCES_VALGRIND_CLIENT_REQUESTS_H

#include <valgrind/valgrind.h>

enum WeftClientRequest {
  /* () -> 1 under weft's tool */
  WEFT_REQ_HELLO = VG_USERREQ_TOOL_BASE('W', 'F'),
  /* () -> weft id of the running thread (given one now if it had none) */
  WEFT_REQ_CURRENT_THREAD,
  /* () -> a fresh weft thread id, in creation order; WEFT_NO_THREAD_ID when
     Valgrind's thread table has no slot left for one more thread */
  WEFT_REQ_RESERVE_THREAD,
  /* (tid, parent + 1, start_routine, os_tid): the running thread is weft thread tid */
  WEFT_REQ_THREAD_START,
  /* (kind, pc, object, arg0, arg1): a synchronization event of the running thread */
  WEFT_REQ_SYNC,
  /* (pc, address, size, is_write): an access made on the program's behalf (memcpy...) */
  WEFT_REQ_ACCESS_RANGE,
  /* (pc) -> 1 when pc is in the program's own code (not libc, libgomp, ...) */
  WEFT_REQ_IS_PROGRAM_PC,
  /* () -> number of weft thread ids handed out */
  WEFT_REQ_THREAD_COUNT,
  /* (pc, address, size): the program allocated a heap block at pc */
  WEFT_REQ_ALLOCATION,
  /* (tid): the thread creation that reserved tid failed */
  WEFT_REQ_CANCEL_THREAD,
  /* (address, size): heap memory is being released (free, realloc) */
  WEFT_REQ_RELEASE,
  /* (base, element_size, count, block, kind << 32 | threads): a declared distribution */
  WEFT_REQ_DISTRIBUTION,
};

#define WEFT_NO_THREAD_ID 0xffffffffu

#endif
