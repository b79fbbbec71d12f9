// The on-disk caches' shared conventions (plan's machine measurement, CUDA's convolution tuning):
// where they live, how they are read and how they are written. A cache is only ever an
// optimization: every failure here is reported as "no cache", never as an error.
#pragma once

#include <string>

namespace polyinfer {

// $XDG_CACHE_HOME/polyinfer, else ~/.cache/polyinfer; "" when neither is known (then nothing is
// cached). The XDG spec says a relative $XDG_CACHE_HOME is invalid and must be ignored.
std::string polyinfer_cache_dir();

// The file's text, or "" when it cannot be read or is larger than `max_bytes` (then it is not
// one of ours and is not read into memory).
std::string read_small_file(const std::string& path, size_t max_bytes = size_t{1} << 20);

// Writes through a temporary file and a rename, creating the folder, so that a reader (another
// polyinfer at the same time) sees the old file or the new one, never half of one. False on any
// failure; the caller carries on without a cache.
bool write_file_atomically(const std::string& path, const std::string& text);

}  // namespace polyinfer
