#include "engine/sampling/philox.hpp"

namespace reprox::engine {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kRounds = 10;

inline void multiply_hi_lo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  *lo = static_cast<uint32_t>(product);
}

}  // namespace

PhiloxCounter philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key) {
  PhiloxCounter x = counter;
  PhiloxKey k = key;
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    multiply_hi_lo(kMultiplier0, x[0], &hi0, &lo0);
    multiply_hi_lo(kMultiplier1, x[2], &hi1, &lo1);
    x = PhiloxCounter{hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0};
  }
  return x;
}

PhiloxCounter sampling_random_block(uint64_t seed, uint32_t choice, uint64_t step) {
  const PhiloxKey key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  const PhiloxCounter counter{static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32),
                              choice, 0u};
  return philox4x32_10(counter, key);
}

double uniform_from_words(uint32_t hi, uint32_t lo) {
  const uint64_t bits = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

double sampling_uniform(uint64_t seed, uint32_t choice, uint64_t step) {
  const PhiloxCounter block = sampling_random_block(seed, choice, step);
  return uniform_from_words(block[0], block[1]);
}

}  // namespace reprox::engine
