// Fixture: app may call core (allowed).
#pragma once

#include "core/core.h"
