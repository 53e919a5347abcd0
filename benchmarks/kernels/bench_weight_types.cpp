#include "benchmarks/kernels/bench_weight_types.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/kernels/bench_common.hpp"
#include "benchmarks/kernels/timing.hpp"
#include "engine/kernels/kernels.hpp"

namespace reprox::bench {
namespace {

using kernels::WeightType;


// Normal fp32 -> half by truncation (the benchmark's values are all normal).
uint16_t to_half(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const int32_t e = static_cast<int32_t>((b >> 23) & 0xff) - 112;
  if (e <= 0) return static_cast<uint16_t>((b >> 16) & 0x8000);
  return static_cast<uint16_t>(((b >> 16) & 0x8000) | (e << 10) | ((b >> 13) & 0x3ff));
}

// w [n, k] fp32 in storage `type`.
std::vector<uint8_t> encode(const std::vector<float>& w, int64_t n, int64_t k, WeightType type) {
  std::vector<uint8_t> out(static_cast<size_t>(n * kernels::weight_row_bytes(type, k)));
  if (type == WeightType::kQ8) {
    kernels::quantize_q8(w.data(), n, k, out.data());
  } else if (type == WeightType::kF32) {
    std::memcpy(out.data(), w.data(), out.size());
  } else {
    for (size_t i = 0; i < w.size(); ++i) {
      uint32_t b;
      std::memcpy(&b, &w[i], 4);
      const uint16_t h = type == WeightType::kBF16 ? static_cast<uint16_t>(b >> 16) : to_half(w[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// The packed rows of `packed` ([n, k] of `type`) copied row_bytes apart.
std::vector<uint8_t> spread_rows(const std::vector<uint8_t>& packed, int64_t n, int64_t k, WeightType type,
                                 int64_t row_bytes) {
  const int64_t own = kernels::weight_row_bytes(type, k);
  std::vector<uint8_t> out(static_cast<size_t>(n * row_bytes));
  for (int64_t r = 0; r < n; ++r) std::memcpy(&out[size_t(r * row_bytes)], &packed[size_t(r * own)], size_t(own));
  return out;
}

// Seconds per call of y = x W^T with rows row_bytes apart (0: packed); cold:
// cycling through copies totalling ~768 MB of storage, so each call streams
// its matrix from DRAM.
double time_linear(WeightType type, int m, int k, int n, bool cold, int64_t row_bytes = 0) {
  std::mt19937 rng(7);
  const std::vector<float> w0 = random_vec(rng, size_t(n) * k, 0.05f), x = random_vec(rng, size_t(m) * k, 0.05f);
  std::vector<float> y(size_t(m) * n);
  std::vector<uint8_t> one = encode(w0, n, k, type);
  if (row_bytes > 0) one = spread_rows(one, n, k, type, row_bytes);
  const size_t copies = cold ? std::max<size_t>(2, (size_t(768) << 20) / one.size()) : 1;
  std::vector<uint8_t> all(one.size() * copies);
  for (size_t c = 0; c < copies; ++c) std::copy(one.begin(), one.end(), all.begin() + c * one.size());
  size_t next = 0;
  return time_call([&] {
    const kernels::WeightMatrix wm(type, all.data() + (next++ % copies) * one.size(), row_bytes);
    kernels::linear(x.data(), m, k, k, wm, n, nullptr, y.data(), n);
  }, cold ? 0.2 : 0.05);
}

// Rows a multiple of 4 KiB long, packed against kernels::padded_row_bytes()
// apart (what strict mode stores): the same bits, different cache sets.
void padding_row(const char* what, WeightType type, int m, int k, int n, bool cold) {
  const double packed = time_linear(type, m, k, n, cold);
  const double padded = time_linear(type, m, k, n, cold, kernels::padded_row_bytes(type, k));
  const double bytes = double(n) * kernels::weight_row_bytes(type, k);
  const std::string label = std::string(what) + " M=" + std::to_string(m) + " K=" + std::to_string(k) +
                            " N=" + std::to_string(n);
  std::printf("%-36s %-5s %9.3f %9.3f %8.1f %8.1f %8.2f\n", label.c_str(), kernels::weight_type_name(type),
              packed * 1e3, padded * 1e3, bytes / packed * 1e-9, bytes / padded * 1e-9, packed / padded);
}

void row(const char* what, int m, int k, int n, bool cold) {
  double f32_s = 0;
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kBF16, WeightType::kQ8}) {
    const double s = time_linear(type, m, k, n, cold);
    if (type == WeightType::kF32) f32_s = s;
    const double bytes = double(n) * kernels::weight_row_bytes(type, k);
    const std::string label = std::string(what) + " M=" + std::to_string(m) + " K=" + std::to_string(k) +
                              " N=" + std::to_string(n);
    std::printf("%-36s %-5s %9.3f %8.1f %8.2f %8.2f\n", label.c_str(), kernels::weight_type_name(type), s * 1e3,
                2.0 * m * k * n / s * 1e-9, bytes / s * 1e-9, f32_s / s);
  }
}

}  // namespace

void bench_weight_types(bool quick) {
  std::printf("\n-- weight storage (strict only; GB/s of the stored bytes; speed-up = f32 time / this time)\n");
  std::printf("%-36s %-5s %9s %8s %8s %8s\n", "shape (y = x W^T)", "type", "ms", "GF/s", "GB/s", "speedup");
  row("decode cold", 1, 576, 1536, true);
  row("decode cold", 1, 1536, 576, true);
  if (!quick) row("decode cold lm_head", 1, 576, 49152, true);
  row("decode hot", 1, 576, 1536, false);
  for (int m : quick ? std::vector<int>{128} : std::vector<int>{128, 512}) {
    row("prefill", m, 576, 1536, false);
    if (!quick) row("prefill", m, 1536, 576, false);
  }
  if (!quick) row("prefill", 128, 2048, 2048, false);  // a ~1B model's attention projection
  row("batch of 8 cold", 8, 2048, 2048, true);
  std::printf("\n-- rows a multiple of 4 KiB: packed vs one cache line apart (speed-up = packed time / padded time)\n");
  std::printf("%-36s %-5s %9s %9s %8s %8s %8s\n", "shape (y = x W^T)", "type", "packed ms", "padded ms", "GB/s",
              "GB/s", "speedup");
  padding_row("decode hot", WeightType::kF16, 1, 2048, 64, false);
  padding_row("decode hot", WeightType::kF32, 1, 1024, 64, false);
  padding_row("decode cold", WeightType::kF16, 1, 2048, 8192, true);
  padding_row("decode cold", WeightType::kF16, 1, 8192, 2048, true);
  if (!quick) padding_row("decode cold", WeightType::kF32, 1, 2048, 2048, true);
  padding_row("batch of 8 cold", WeightType::kF16, 8, 2048, 8192, true);
}

}  // namespace reprox::bench
