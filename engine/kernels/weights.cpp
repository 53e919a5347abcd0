// Weight storage helpers (kernels.hpp, "weight storage"): row sizes, q8
// quantization and row widening for embedding lookups. Portable scalar code
// (built with -ffp-contract=off), so the bytes and values never depend on
// the CPU.
#include <cpuid.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kernels/internal/canonical.hpp"
#include "engine/kernels/internal/paths.hpp"
#include "engine/kernels/kernels.hpp"

namespace reprox::kernels {

int64_t weight_row_bytes(WeightType type, int64_t k) {
  switch (type) {
    case WeightType::kF16:
    case WeightType::kBF16: return 2 * k;
    case WeightType::kQ8: return q8_row_bytes(k);
    default: return 4 * k;
  }
}

int64_t padded_row_bytes(WeightType type, int64_t k) {
  const int64_t bytes = weight_row_bytes(type, k);
  return bytes > 0 && bytes % 4096 == 0 ? bytes + 64 : bytes;
}

const char* weight_type_name(WeightType type) {
  switch (type) {
    case WeightType::kF16: return "f16";
    case WeightType::kBF16: return "bf16";
    case WeightType::kQ8: return "q8";
    default: return "f32";
  }
}

const char* weights_mode_id(WeightType type) {
  switch (type) {
    case WeightType::kF16: return "f16-widen-exact";
    case WeightType::kBF16: return "bf16-widen-exact";
    case WeightType::kQ8: return "q8-b32-f32scale-amax127-roundaway-mul";
    default: return "f32";
  }
}

void quantize_q8(const float* w, int64_t n, int64_t k, void* out) {
  const int64_t blocks = q8_blocks(k);
  for (int64_t r = 0; r < n; ++r) {
    const float* src = w + r * k;
    uint8_t* row = static_cast<uint8_t*>(out) + r * q8_row_bytes(k);
    int8_t* q = reinterpret_cast<int8_t*>(row + 4 * blocks);
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kQ8Block, end = std::min(k, begin + kQ8Block);
      float amax = 0.0f;
      for (int64_t j = begin; j < end; ++j) amax = std::max(amax, std::fabs(src[j]));
      const float scale = amax / 127.0f;
      std::memcpy(row + 4 * b, &scale, sizeof scale);
      for (int64_t j = begin; j < end; ++j) {
        const float v = scale > 0.0f ? std::round(src[j] / scale) : 0.0f;
        q[j] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
      }
    }
  }
}

void widen_rows(const WeightMatrix& w, int64_t k, const int64_t* rows, int64_t count, float* out) {
  const int64_t row_bytes = internal::row_distance(w, k);
  const uint8_t* base = static_cast<const uint8_t*>(w.data);
  for (int64_t i = 0; i < count; ++i) {
    canonical::widen_row(static_cast<int>(w.type), base + rows[i] * row_bytes, k, out + i * k);
  }
}

namespace internal {

int64_t row_distance(const WeightMatrix& w, int64_t k) {
  return w.row_bytes > 0 ? w.row_bytes : weight_row_bytes(w.type, k);
}

bool has_f16c() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  }();
  return yes;
}

}  // namespace internal
}  // namespace reprox::kernels
