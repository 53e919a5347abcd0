// Philox4x32-10: the counter-based random number generator of Salmon, Moraes,
// Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11), as
// specified by Random123. A pure function of (counter, key): no state, so any
// draw can be recomputed from its coordinates alone.
#pragma once

#include <array>
#include <cstdint>

namespace reprox::engine {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Ten rounds of Philox4x32 on `counter` under `key`.
PhiloxCounter philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key);

// The block that drives draw number `step` of choice `choice` for `seed`:
//   key     = { low 32 bits of seed, high 32 bits of seed }
//   counter = { low 32 bits of step, high 32 bits of step, choice, 0 }
// Word 3 of the counter is reserved (0 = token sampling).
PhiloxCounter sampling_random_block(uint64_t seed, uint32_t choice, uint64_t step);

// A double in [0, 1) with 53 random bits: ((hi << 32 | lo) >> 11) * 2^-53.
double uniform_from_words(uint32_t hi, uint32_t lo);

// uniform_from_words(block[0], block[1]) of sampling_random_block().
double sampling_uniform(uint64_t seed, uint32_t choice, uint64_t step);

}  // namespace reprox::engine
