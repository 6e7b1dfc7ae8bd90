// Fixture: a file of the pattern part `src/*/*_view.h`, which may call app
// although its folder's part (core) may not.
#pragma once

#include "app/app.h"
