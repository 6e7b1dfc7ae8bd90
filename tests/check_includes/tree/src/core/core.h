// Fixture: core may not call app (the violation check-includes.py must find).
#pragma once

#include <vector>

#include "app/app.h"
