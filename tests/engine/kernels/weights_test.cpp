// linear() with f16, bf16 and q8 weights: bitwise equal to the fp32 linear on
// the widened / dequantized matrix (one canonical order), the same bits on
// every ISA, at every thread count and for a row alone or inside any batch;
// plus the widening and q8 quantization themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/engine/kernels/test_util.hpp"

namespace reprox::kernels::test {
namespace {

// k = 1000 and 520 span several 256-wide chunks of the AVX2 blocked path
// and end in a partial step; n = 29 and 13 leave partial column tiles.
const Shape kWeightShapes[] = {{576, 576}, {576, 1536}, {64, 128}, {7, 5},     {33, 19},
                               {200, 37},  {48, 16},    {1000, 29}, {520, 13}};
const WeightType kTypes[] = {WeightType::kF16, WeightType::kBF16, WeightType::kQ8};

// A weight matrix [n, k] of type `type` as raw bytes.
struct TypedWeights {
  WeightType type;
  int64_t n, k;
  std::vector<uint8_t> bytes;
  WeightMatrix matrix() const { return {type, bytes.data()}; }
  // Every row widened: the fp32 matrix the typed one must behave like.
  std::vector<float> widened() const {
    std::vector<int64_t> rows(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
    std::vector<float> out(static_cast<size_t>(n * k));
    widen_rows(matrix(), k, rows.data(), n, out.data());
    return out;
  }
};

// f16: random finite halves (normal exponents -10..5 and some subnormals);
// bf16: the upper halves of normal floats; q8: quantized normal floats.
TypedWeights make_weights(std::mt19937& rng, WeightType type, int64_t n, int64_t k) {
  TypedWeights t{type, n, k, std::vector<uint8_t>(static_cast<size_t>(n * weight_row_bytes(type, k)))};
  const std::vector<float> w = random_vec(rng, static_cast<size_t>(n * k), 0.05f);
  if (type == WeightType::kQ8) {
    quantize_q8(w.data(), n, k, t.bytes.data());
    return t;
  }
  std::uniform_int_distribution<int> bits(0, 0xffff), exp(5, 20);
  for (int64_t i = 0; i < n * k; ++i) {
    uint16_t h;
    if (type == WeightType::kBF16) {
      uint32_t f;
      std::memcpy(&f, &w[static_cast<size_t>(i)], 4);
      h = static_cast<uint16_t>(f >> 16);
    } else {
      const int r = bits(rng);
      const int e = (r & 7) == 0 ? 0 : exp(rng);  // 1 in 8 subnormal (or zero)
      h = static_cast<uint16_t>((r & 0x8000) | (e << 10) | (bits(rng) & 0x3ff));
    }
    std::memcpy(&t.bytes[static_cast<size_t>(2 * i)], &h, 2);
  }
  return t;
}

std::vector<float> run(const std::vector<float>& x, int64_t m, const TypedWeights& w, const float* bias) {
  std::vector<float> y(static_cast<size_t>(m * w.n), NAN);
  linear(x.data(), m, w.k, w.k, w.matrix(), w.n, bias, y.data(), w.n);
  return y;
}

std::vector<float> run_f32(const std::vector<float>& x, int64_t m, const std::vector<float>& w, int64_t k, int64_t n,
                           const float* bias) {
  std::vector<float> y(static_cast<size_t>(m * n), NAN);
  linear(x.data(), m, k, w.data(), n, bias, y.data());
  return y;
}

TEST(GemmWeights, EqualsFp32OnWidenedWeightsOnEveryIsa) {
  SettingsGuard guard;
  std::mt19937 rng(21);
  for (WeightType type : kTypes) {
    for (const Shape& s : kWeightShapes) {
      const TypedWeights w = make_weights(rng, type, s.n, s.k);
      const std::vector<float> wide = w.widened(), b = random_vec(rng, s.n);
      for (int64_t m : {1, 3, 4, 7, 70}) {
        const std::vector<float> x = random_vec(rng, m * s.k);
        set_isa(Isa::kScalar);
        const std::vector<float> ref = run_f32(x, m, wide, s.k, s.n, b.data());
        for (Isa isa : runnable_isas()) {
          ASSERT_EQ(set_isa(isa), isa);
          const std::vector<float> got = run(x, m, w, b.data());
          ASSERT_TRUE(same_bits(ref.data(), got.data(), ref.size()))
              << weight_type_name(type) << " " << isa_name(isa) << " k=" << s.k << " n=" << s.n << " m=" << m;
        }
      }
    }
  }
}

// k = 0: every output is the empty dot, +0, plus the bias, on every path
// and at any number of rows (the AVX2 blocked path has no chunk to run).
TEST(GemmWeights, NoInputsGiveTheBias) {
  SettingsGuard guard;
  std::mt19937 rng(24);
  const int64_t n = 29;
  const std::vector<float> b = random_vec(rng, n);
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kBF16, WeightType::kQ8}) {
    const std::vector<uint8_t> none(16);  // rows of zero bytes; never read
    for (Isa isa : runnable_isas()) {
      ASSERT_EQ(set_isa(isa), isa);
      for (int64_t m : {1, 4, 8, 32, 70}) {
        const std::vector<float> x(static_cast<size_t>(m), 1.0f);
        for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
          std::vector<float> y(static_cast<size_t>(m * n), NAN);
          linear(x.data(), m, 0, 1, WeightMatrix(type, none.data()), n, bias, y.data(), n);
          for (int64_t i = 0; i < m * n; ++i) {
            const float want = bias != nullptr ? 0.0f + bias[i % n] : 0.0f;
            ASSERT_TRUE(same_bits(&want, &y[static_cast<size_t>(i)], 1))
                << weight_type_name(type) << " " << isa_name(isa) << " m=" << m << " at " << i << ": " << y[i];
          }
        }
      }
    }
  }
}

TEST(GemmWeights, RowAloneEqualsRowInsideRandomBatches) {
  SettingsGuard guard;
  std::mt19937 rng(22);
  for (WeightType type : kTypes) {
    for (Isa isa : runnable_isas()) {
      set_isa(isa);
      for (const Shape& s : {Shape{576, 64}, Shape{200, 37}}) {
        const TypedWeights w = make_weights(rng, type, s.n, s.k);
        const int64_t m = std::uniform_int_distribution<int64_t>(2, 64)(rng);
        const std::vector<float> x = random_vec(rng, m * s.k);
        const std::vector<float> batch = run(x, m, w, nullptr);
        for (int64_t r = 0; r < m; ++r) {
          const std::vector<float> row(x.begin() + r * s.k, x.begin() + (r + 1) * s.k);
          const std::vector<float> alone = run(row, 1, w, nullptr);
          ASSERT_TRUE(same_bits(alone.data(), batch.data() + r * s.n, s.n))
              << weight_type_name(type) << " " << isa_name(isa) << " m=" << m << " row " << r;
        }
      }
    }
  }
}

TEST(GemmWeights, ThreadCountAndLinearManyDoNotChangeBits) {
  SettingsGuard guard;
  std::mt19937 rng(23);
  const int64_t k = 200, m = 9;
  std::vector<TypedWeights> ws;
  for (WeightType type : kTypes) ws.push_back(make_weights(rng, type, 96, k));
  const std::vector<float> x = random_vec(rng, m * k);
  set_num_threads(1);
  std::vector<std::vector<float>> alone;
  for (const TypedWeights& w : ws) alone.push_back(run(x, m, w, nullptr));
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<std::vector<float>> ys;
    std::vector<Projection> outs;
    for (const TypedWeights& w : ws) ys.emplace_back(static_cast<size_t>(m * w.n), NAN);
    for (size_t i = 0; i < ws.size(); ++i) outs.push_back({ws[i].matrix(), ws[i].n, nullptr, ys[i].data()});
    linear_many(x.data(), m, k, outs.data(), static_cast<int>(outs.size()));
    for (size_t i = 0; i < ws.size(); ++i) {
      ASSERT_TRUE(same_bits(alone[i].data(), ys[i].data(), ys[i].size())) << "threads=" << threads << " proj " << i;
      ASSERT_TRUE(same_bits(alone[i].data(), run(x, m, ws[i], nullptr).data(), ys[i].size()));
    }
  }
}

// w's rows copied `gap` bytes apart beyond their own length, the gaps
// filled with 0xff (a NaN in every type, were it ever read).
std::vector<uint8_t> rows_apart(const TypedWeights& w, int64_t gap) {
  const int64_t row = weight_row_bytes(w.type, w.k);
  std::vector<uint8_t> out(static_cast<size_t>(w.n * (row + gap)), 0xff);
  for (int64_t r = 0; r < w.n; ++r) std::memcpy(&out[static_cast<size_t>(r * (row + gap))], &w.bytes[static_cast<size_t>(r * row)], static_cast<size_t>(row));
  return out;
}

TEST(GemmWeights, RowsAnyDistanceApartGiveTheBitsOfPackedRows) {
  SettingsGuard guard;
  std::mt19937 rng(24);
  // k = 2048 makes f16 / bf16 rows exactly 4 KiB, the case the padding is for.
  for (WeightType type : kTypes) {
    for (const Shape& s : {Shape{2048, 40}, Shape{576, 33}, Shape{33, 19}}) {
      const TypedWeights w = make_weights(rng, type, s.n, s.k);
      const int64_t packed = weight_row_bytes(type, s.k);
      for (int64_t gap : {int64_t{64}, int64_t{4}, padded_row_bytes(type, s.k) - packed}) {
        const std::vector<uint8_t> apart = rows_apart(w, gap);
        const WeightMatrix matrix{type, apart.data(), packed + gap};
        for (Isa isa : runnable_isas()) {
          set_isa(isa);
          for (int64_t m : {1, 3, 4, 9}) {
            const std::vector<float> x = random_vec(rng, m * s.k), b = random_vec(rng, s.n);
            const std::vector<float> want = run(x, m, w, b.data());
            std::vector<float> got(want.size(), NAN);
            linear(x.data(), m, s.k, s.k, matrix, s.n, b.data(), got.data(), s.n);
            ASSERT_TRUE(same_bits(want.data(), got.data(), want.size()))
                << weight_type_name(type) << " " << isa_name(isa) << " k=" << s.k << " gap " << gap << " m=" << m;
          }
        }
        const int64_t picked[] = {s.n - 1, 0, s.n / 2};
        std::vector<float> want(static_cast<size_t>(3 * s.k)), got(want.size());
        widen_rows(w.matrix(), s.k, picked, 3, want.data());
        widen_rows(matrix, s.k, picked, 3, got.data());
        ASSERT_TRUE(same_bits(want.data(), got.data(), want.size())) << weight_type_name(type) << " gap " << gap;
      }
    }
  }
}

TEST(GemmWeights, PaddingIsOneLineOnRowsThatAreAMultipleOf4KiB) {
  EXPECT_EQ(padded_row_bytes(WeightType::kF16, 2048), 4096 + 64);
  EXPECT_EQ(padded_row_bytes(WeightType::kBF16, 8192), 16384 + 64);
  EXPECT_EQ(padded_row_bytes(WeightType::kF32, 1024), 4096 + 64);
  EXPECT_EQ(padded_row_bytes(WeightType::kF16, 1024), 2048);
  EXPECT_EQ(padded_row_bytes(WeightType::kF32, 1536), 6144);
  EXPECT_EQ(padded_row_bytes(WeightType::kQ8, 2048), q8_row_bytes(2048));
  EXPECT_EQ(padded_row_bytes(WeightType::kF16, 0), 0);
}

// Independent reference for IEEE half: sign * mant * 2^(exp - 25) etc.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double mag = e == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

TEST(GemmWeights, WideningIsExactForEveryBitPattern) {
  std::vector<uint8_t> f16(2 * 65536), bf16(2 * 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    std::memcpy(&f16[2 * i], &h, 2);
    std::memcpy(&bf16[2 * i], &h, 2);
  }
  std::vector<float> out_h(65536), out_b(65536);
  const int64_t row = 0;
  widen_rows({WeightType::kF16, f16.data()}, 65536, &row, 1, out_h.data());
  widen_rows({WeightType::kBF16, bf16.data()}, 65536, &row, 1, out_b.data());
  for (uint32_t i = 0; i < 65536; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out_b[i], 4);
    ASSERT_EQ(bits, i << 16);
    const int e = (i >> 10) & 0x1f;
    if (e == 0x1f) {
      ASSERT_TRUE((i & 0x3ff) ? std::isnan(out_h[i]) : std::isinf(out_h[i])) << i;
    } else {
      ASSERT_EQ(static_cast<double>(out_h[i]), half_value(static_cast<uint16_t>(i))) << i;
      ASSERT_EQ(std::signbit(out_h[i]), (i & 0x8000) != 0) << i;
    }
  }
}

TEST(GemmWeights, Q8QuantizesBlocksOf32WithMaxAbsScale) {
  const int64_t k = 70;  // blocks of 32, 32, 6
  std::vector<float> w(static_cast<size_t>(k), 0.0f);
  w[0] = 127.0f;
  w[1] = -63.5f;  // half away from zero: -64
  w[2] = 0.49f;
  for (int64_t j = 32; j < 64; ++j) w[static_cast<size_t>(j)] = 0.0f;  // all-zero block: scale 0
  w[64] = -2.0f;
  w[65] = 1.0f;
  std::vector<uint8_t> q(static_cast<size_t>(q8_row_bytes(k)));
  ASSERT_EQ(q8_row_bytes(k), 4 * 3 + k);
  quantize_q8(w.data(), 1, k, q.data());
  float scales[3];
  std::memcpy(scales, q.data(), sizeof scales);
  EXPECT_EQ(scales[0], 1.0f);
  EXPECT_EQ(scales[1], 0.0f);
  EXPECT_EQ(scales[2], 2.0f / 127.0f);
  const int8_t* values = reinterpret_cast<const int8_t*>(q.data() + 12);
  EXPECT_EQ(values[0], 127);
  EXPECT_EQ(values[1], -64);
  EXPECT_EQ(values[2], 0);
  EXPECT_EQ(values[64], -127);
  EXPECT_EQ(values[65], 64);  // 1 / (2/127) = 63.5 -> 64
  std::vector<float> back(static_cast<size_t>(k));
  const int64_t row = 0;
  widen_rows({WeightType::kQ8, q.data()}, k, &row, 1, back.data());
  EXPECT_EQ(back[0], 127.0f);
  EXPECT_EQ(back[1], -64.0f);
  EXPECT_EQ(back[40], 0.0f);
  EXPECT_EQ(back[64], -127.0f * (2.0f / 127.0f));
}

TEST(GemmWeights, Q8ErrorIsWithinHalfAStep) {
  std::mt19937 rng(24);
  const int64_t n = 16, k = 100;
  const std::vector<float> w = random_vec(rng, n * k);
  std::vector<uint8_t> q(static_cast<size_t>(n * q8_row_bytes(k)));
  quantize_q8(w.data(), n, k, q.data());
  TypedWeights t{WeightType::kQ8, n, k, q};
  const std::vector<float> back = t.widened();
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t b0 = j / 32 * 32;
      float amax = 0.0f;
      for (int64_t i = b0; i < std::min(k, b0 + 32); ++i) amax = std::max(amax, std::fabs(w[r * k + i]));
      ASSERT_LE(std::fabs(back[r * k + j] - w[r * k + j]), 0.5f * amax / 127.0f * 1.0001f + 1e-12f);
    }
  }
}

}  // namespace
}  // namespace reprox::kernels::test
