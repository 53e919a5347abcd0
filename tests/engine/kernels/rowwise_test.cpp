// Norms, activations and RoPE: rows alone vs in batches, every ISA against
// the scalar bits, accuracy against double-precision formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/engine/kernels/test_util.hpp"

namespace reprox::kernels::test {
namespace {

const int64_t kDims[] = {576, 64, 128, 1, 15, 17, 100};

using RowOp = std::function<void(const float* x, int64_t rows, int64_t d, float* y)>;

std::vector<std::pair<const char*, RowOp>> row_ops(const std::vector<float>& w, const std::vector<float>& b) {
  return {
      {"rms_norm", [&](const float* x, int64_t r, int64_t d, float* y) { rms_norm(x, r, d, w.data(), 1e-6f, y); }},
      {"layer_norm",
       [&](const float* x, int64_t r, int64_t d, float* y) { layer_norm(x, r, d, w.data(), b.data(), 1e-5f, y); }},
      {"layer_norm_nobias",
       [&](const float* x, int64_t r, int64_t d, float* y) { layer_norm(x, r, d, w.data(), nullptr, 1e-5f, y); }},
      {"silu_mul", [&](const float* x, int64_t r, int64_t d, float* y) { silu_mul(x, x + 0, r * d, y); }},
      {"gelu_tanh", [&](const float* x, int64_t r, int64_t d, float* y) { gelu_tanh(x, r * d, y); }},
  };
}

TEST(Rowwise, RowAloneEqualsRowInsideBatchAndEveryIsa) {
  SettingsGuard guard;
  std::mt19937 rng(21);
  for (int64_t d : kDims) {
    const std::vector<float> w = random_vec(rng, d), b = random_vec(rng, d);
    for (const auto& [name, op] : row_ops(w, b)) {
      const int64_t m = std::uniform_int_distribution<int64_t>(2, 64)(rng);
      const std::vector<float> x = random_vec(rng, m * d, 3.0f);
      set_isa(Isa::kScalar);
      std::vector<float> ref(m * d);
      op(x.data(), m, d, ref.data());
      for (Isa isa : runnable_isas()) {
        set_isa(isa);
        std::vector<float> batch(m * d);
        op(x.data(), m, d, batch.data());
        ASSERT_TRUE(same_bits(ref.data(), batch.data(), batch.size())) << name << " " << isa_name(isa) << " d=" << d;
        for (int64_t r = 0; r < m; ++r) {
          std::vector<float> alone(d);
          op(x.data() + r * d, 1, d, alone.data());
          ASSERT_TRUE(same_bits(alone.data(), batch.data() + r * d, d)) << name << " d=" << d << " row " << r;
        }
        std::vector<float> in_place = x;  // y may alias x
        op(in_place.data(), m, d, in_place.data());
        ASSERT_TRUE(same_bits(in_place.data(), batch.data(), batch.size())) << name << " in place";
      }
    }
  }
}

TEST(Rowwise, NormsMatchDoubleReference) {
  std::mt19937 rng(22);
  for (int64_t d : kDims) {
    const std::vector<float> x = random_vec(rng, 3 * d, 2.0f), w = random_vec(rng, d), b = random_vec(rng, d);
    std::vector<float> rms(3 * d), ln(3 * d);
    rms_norm(x.data(), 3, d, w.data(), 1e-6f, rms.data());
    layer_norm(x.data(), 3, d, w.data(), b.data(), 1e-5f, ln.data());
    for (int64_t r = 0; r < 3; ++r) {
      const float* xr = x.data() + r * d;
      double ss = 0, mean = 0, var = 0;
      for (int64_t j = 0; j < d; ++j) ss += double(xr[j]) * xr[j], mean += xr[j];
      mean /= d;
      for (int64_t j = 0; j < d; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      var /= d;
      for (int64_t j = 0; j < d; ++j) {
        const double want_rms = xr[j] / std::sqrt(ss / d + 1e-6) * w[j];
        const double want_ln = (xr[j] - mean) / std::sqrt(var + 1e-5) * w[j] + b[j];
        ASSERT_NEAR(rms[r * d + j], want_rms, 1e-5 * (std::fabs(want_rms) + std::fabs(w[j]))) << "d=" << d;
        ASSERT_NEAR(ln[r * d + j], want_ln, 1e-5 * (std::fabs(want_ln) + std::fabs(w[j]) + 1)) << "d=" << d;
      }
    }
  }
}

TEST(Rowwise, ActivationsMatchDoubleReference) {
  SettingsGuard guard;
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0173f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, 88.5f, -88.5f, 1e30f, -1e30f}) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  for (Isa isa : runnable_isas()) {
    set_isa(isa);
    std::vector<float> silu(n), gelu(n);
    silu_mul(x.data(), x.data(), n, silu.data());
    gelu_tanh(x.data(), n, gelu.data());
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i];
      // Below ~1e-30 the intermediate silu(v) is subnormal or flushed by exp overflow.
      const double want_silu = v / (1 + std::exp(-v)) * v;
      // 0.5 v (1 + tanh(u)) == v / (1 + exp(-2u)), the stable form; the float
      // rounding of u itself is amplified by |2u| through exp.
      const double u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
      const double want_gelu = v / (1 + std::exp(-2 * u));
      if (std::fabs(want_silu) > 3.4e38) {
        ASSERT_TRUE(std::isinf(silu[i])) << "x=" << v;  // overflows float, as it must
      } else {
        ASSERT_NEAR(silu[i], want_silu, 4e-7 * std::fabs(want_silu) + 1e-30) << isa_name(isa) << " x=" << v;
      }
      ASSERT_NEAR(gelu[i], want_gelu, (1e-6 + 4e-7 * std::fabs(2 * u)) * std::fabs(want_gelu) + 1e-37)
          << isa_name(isa) << " x=" << v;
    }
  }
  const float nan = std::nanf("");
  std::vector<float> nan_out(1);
  gelu_tanh(&nan, 1, nan_out.data());
  EXPECT_TRUE(std::isnan(nan_out[0]));
}

TEST(Rope, StridedInPlaceMatchesFormulaAndIsaInvariant) {
  SettingsGuard guard;
  std::mt19937 rng(23);
  for (int64_t d : {64, 128, 6, 34}) {
    const int64_t heads = 3, t = 5, half = d / 2;
    // [t, heads, d] buffer viewed as [heads, t, d]: head_stride d, token_stride heads*d.
    const std::vector<float> x = random_vec(rng, t * heads * d), cos = random_vec(rng, t * half),
                             sin = random_vec(rng, t * half);
    set_isa(Isa::kScalar);
    std::vector<float> ref = x;
    apply_rope(ref.data(), heads, t, d, d, heads * d, cos.data(), sin.data());
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = 0; j < half; ++j) {
          const float* src = x.data() + i * heads * d + h * d;
          const float c = cos[i * half + j], s = sin[i * half + j];
          const float lo = src[j] * c, hi = src[j + half] * s;
          ASSERT_EQ(ref[i * heads * d + h * d + j], lo - hi);
        }
      }
    }
    for (Isa isa : runnable_isas()) {
      set_isa(isa);
      std::vector<float> got = x;
      apply_rope(got.data(), heads, t, d, d, heads * d, cos.data(), sin.data());
      ASSERT_TRUE(same_bits(ref.data(), got.data(), got.size())) << isa_name(isa) << " d=" << d;
      // One token alone (t = 1) at its own cos/sin row gives the same bits.
      std::vector<float> one(x.begin() + 2 * heads * d, x.begin() + 3 * heads * d);
      apply_rope(one.data(), heads, 1, d, d, heads * d, cos.data() + 2 * half, sin.data() + 2 * half);
      ASSERT_TRUE(same_bits(one.data(), ref.data() + 2 * heads * d, heads * d));
    }
  }
}

}  // namespace
}  // namespace reprox::kernels::test
