/* weft's section annotations, for barriers weft cannot see: hand-written
 * spin or condition-variable barriers (SPLASH's BARRIER macros and the like).
 *
 *   WEFT_SECTION_END(&bar);    // this thread's part of the section ends here
 *   my_barrier_wait(&bar);
 *   WEFT_SECTION_BEGIN(&bar);  // the next section starts
 *
 * To weft, the pair is exactly a pthread_barrier_wait on the object `team`:
 * the n-th WEFT_SECTION_END of every thread with the same `team` closes one
 * instance of the section named after the line of the END (see
 * docs/metrics.md, "Parallel section"), for the communication and the
 * load-imbalance analyses alike.
 *
 * The functions are weak: a program built without weft, or run without
 * weft, links and runs unchanged (the macros then do nothing). weft
 * defines them in its runtime (compile-time source) and in the preload
 * library of its Valgrind tool (binary source).
 */
#ifndef WEFT_SECTIONS_H
#define WEFT_SECTIONS_H

#ifdef __cplusplus
extern "C" {
#endif

void weft_section_end(const void* team) __attribute__((weak));
void weft_section_begin(const void* team) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define WEFT_SECTION_END(team)                    \
  do {                                            \
    if (weft_section_end) weft_section_end(team); \
  } while (0)
#define WEFT_SECTION_BEGIN(team)                      \
  do {                                                \
    if (weft_section_begin) weft_section_begin(team); \
  } while (0)

#endif
