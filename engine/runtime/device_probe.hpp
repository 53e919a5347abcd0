// What a device can move, for benchmarks that report a fraction of the
// memory-bound limit. Torch-free header.
#pragma once

#include <cstddef>
#include <string>

namespace reprox::engine {

// Copies a `bytes` buffer into another on `device` ("cpu", "cuda", "cuda:N")
// `reps` times after one warm-up copy and returns the copy bandwidth in bytes
// per second, counting what is read and what is written (2 * bytes per copy,
// as STREAM's copy does). Throws std::runtime_error when the device cannot be
// used. Blocks the calling thread; allocates 2 * bytes on the device.
double device_copy_bandwidth(const std::string& device, size_t bytes = size_t{1} << 30, int reps = 20);

}  // namespace reprox::engine
