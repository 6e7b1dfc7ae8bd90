// The keeper: a small process the runtime starts next to the program, which
// waits for the program's image to end and writes the raw capture when the
// program could not (SIGKILL, _exit, exec, a stack overflow, a crash whose
// handler could not run). It can, because every analyzer's state lives in
// the shared arena (analyzers/state/page_memory.h) and it runs the
// runtime's own code at the same addresses (a fork of the program taken at
// start-up). It is the child of the program's parent (CLONE_PARENT), not
// the program's, so the program's wait() never sees it. It shares the
// program's open capture file, and with it the flock the runtime took:
// `weft record` reads the capture once that lock is free, i.e. when neither
// the program nor its keeper can write any more.
#pragma once

#include "sources/compile/runtime.h"

namespace weft::rt {

// Starts the keeper for `rt` (arena memory); false when it cannot (the run
// is then recorded as before, without the backstop).
bool start_keeper(Runtime& rt);

// In a forked child of the program: the child is not the program, its end
// must not wake the keeper.
void leave_keeper(Runtime& rt);

// Copies the program's memory map into rt.maps (at start-up and after each
// module load).
void copy_process_maps(Runtime& rt);

}  // namespace weft::rt
