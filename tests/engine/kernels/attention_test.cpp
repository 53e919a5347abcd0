// causal_attention(): prefill vs prefix + single-token decode steps, KV
// capacity, GQA ratios, threads and ISA, all bitwise; accuracy vs double.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/engine/kernels/test_util.hpp"

namespace reprox::kernels::test {
namespace {

// A model-like KV cache [n_kv, capacity, d] and the queries of one sequence
// stored as [len, n_heads, d] (the layout the model's linear output has).
struct Sequence {
  int64_t n_heads, n_kv, d, len;
  std::vector<float> q, k, v;  // q [len, n_heads, d]; k, v [n_kv, len, d]
};

Sequence make_sequence(std::mt19937& rng, int64_t n_heads, int64_t n_kv, int64_t d, int64_t len) {
  return {n_heads, n_kv, d, len, random_vec(rng, len * n_heads * d), random_vec(rng, n_kv * len * d, 1.5f),
          random_vec(rng, n_kv * len * d)};
}

// Runs queries [start, start + t) against keys 0..start+t-1 copied into a cache
// of `capacity` positions (junk beyond), returns out [t, n_heads * d].
std::vector<float> run(const Sequence& s, int64_t start, int64_t t, int64_t capacity) {
  std::vector<float> k(s.n_kv * capacity * s.d, 1e30f), v(s.n_kv * capacity * s.d, -1e30f);
  for (int64_t g = 0; g < s.n_kv; ++g) {
    for (int64_t p = 0; p < start + t; ++p) {
      for (int64_t j = 0; j < s.d; ++j) {
        k[(g * capacity + p) * s.d + j] = s.k[(g * s.len + p) * s.d + j];
        v[(g * capacity + p) * s.d + j] = s.v[(g * s.len + p) * s.d + j];
      }
    }
  }
  std::vector<float> out(t * s.n_heads * s.d, NAN);
  AttentionArgs a;
  a.q = s.q.data() + start * s.n_heads * s.d;
  a.n_heads = s.n_heads;
  a.t = t;
  a.head_dim = s.d;
  a.q_head_stride = s.d;
  a.q_token_stride = s.n_heads * s.d;
  a.k = k.data();
  a.v = v.data();
  a.n_kv_heads = s.n_kv;
  a.kv_head_stride = capacity * s.d;
  a.q_offset = start;
  a.out = out.data();
  causal_attention(a);
  return out;
}

struct Config {
  int64_t n_heads, n_kv, d;
};
const Config kConfigs[] = {{4, 4, 64}, {9, 3, 64}, {8, 2, 128}, {3, 1, 20}};

TEST(Attention, PrefillEqualsPrefixThenDecodeSteps) {
  std::mt19937 rng(31);
  for (const Config& c : kConfigs) {
    for (int64_t len : {1, 16, 17, 40, 133}) {
      const Sequence s = make_sequence(rng, c.n_heads, c.n_kv, c.d, len);
      const std::vector<float> full = run(s, 0, len, len);
      const int64_t row = c.n_heads * c.d;
      const int64_t split = std::uniform_int_distribution<int64_t>(0, len - 1)(rng);
      // Prefix prefill, a chunked middle, then one-token decode steps.
      const std::vector<float> prefix = run(s, 0, split, len + 5);
      ASSERT_TRUE(same_bits(prefix.data(), full.data(), split * row)) << "prefix len " << split;
      for (int64_t pos = split; pos < len; ++pos) {
        const std::vector<float> step = run(s, pos, 1, pos + 1 + (pos % 3) * 7);
        ASSERT_TRUE(same_bits(step.data(), full.data() + pos * row, row))
            << "heads " << c.n_heads << "/" << c.n_kv << " d " << c.d << " len " << len << " pos " << pos;
      }
      const int64_t a = split / 2;
      const std::vector<float> chunk = run(s, a, len - a, 2 * len);
      ASSERT_TRUE(same_bits(chunk.data(), full.data() + a * row, (len - a) * row));
    }
  }
}

TEST(Attention, MatchesDoubleReference) {
  std::mt19937 rng(32);
  for (const Config& c : kConfigs) {
    const int64_t len = 37;
    const Sequence s = make_sequence(rng, c.n_heads, c.n_kv, c.d, len);
    const std::vector<float> out = run(s, 0, len, len);
    const int64_t group = c.n_heads / c.n_kv;
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t h = 0; h < c.n_heads; ++h) {
        const float* q = s.q.data() + (i * c.n_heads + h) * c.d;
        const int64_t g = h / group;
        std::vector<double> sc(i + 1);
        double mx = -INFINITY;
        for (int64_t p = 0; p <= i; ++p) {
          double dot = 0;
          for (int64_t j = 0; j < c.d; ++j) dot += double(q[j]) * s.k[(g * len + p) * c.d + j];
          sc[p] = dot / std::sqrt(double(c.d));
          mx = std::max(mx, sc[p]);
        }
        double den = 0;
        for (double& x : sc) den += (x = std::exp(x - mx));
        for (int64_t j = 0; j < c.d; ++j) {
          double want = 0, mag = 0;
          for (int64_t p = 0; p <= i; ++p) {
            want += sc[p] * s.v[(g * len + p) * c.d + j] / den;
            mag += std::fabs(sc[p] * s.v[(g * len + p) * c.d + j] / den);
          }
          ASSERT_NEAR(out[i * c.n_heads * c.d + h * c.d + j], want, 2e-5 * mag + 1e-6) << "i=" << i << " h=" << h;
        }
      }
    }
  }
}

TEST(Attention, ThreadsAndIsaDoNotChangeBits) {
  SettingsGuard guard;
  std::mt19937 rng(33);
  for (const Config& c : kConfigs) {
    const Sequence s = make_sequence(rng, c.n_heads, c.n_kv, c.d, 70);
    set_isa(Isa::kScalar);
    set_num_threads(1);
    const std::vector<float> ref = run(s, 0, 70, 70);
    for (Isa isa : runnable_isas()) {
      set_isa(isa);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const std::vector<float> got = run(s, 0, 70, 70);
        ASSERT_TRUE(same_bits(ref.data(), got.data(), ref.size()))
            << isa_name(isa) << " threads " << threads << " d " << c.d;
        // A decode step: one query per head, the heads of a KV group together.
        const int64_t row = c.n_heads * c.d;
        const std::vector<float> step = run(s, 69, 1, 80);
        ASSERT_TRUE(same_bits(ref.data() + 69 * row, step.data(), row))
            << "decode " << isa_name(isa) << " threads " << threads << " d " << c.d;
      }
    }
  }
}

}  // namespace
}  // namespace reprox::kernels::test
