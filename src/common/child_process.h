// What every program weft starts does first, in the forked child before exec.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace weft {

// The child dies with weft (SIGKILL when `parent` ends, even by SIGKILL):
// a killed `weft record` must not leave the program running orphaned. The
// setting survives exec.
inline void die_with_parent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(128 + SIGKILL);  // weft already gone
}

}  // namespace weft
