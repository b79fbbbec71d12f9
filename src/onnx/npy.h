// The .npy reader and writer are part of the public API: see polyinfer/io.h.
#pragma once

#include "polyinfer/io.h"
