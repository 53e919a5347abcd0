#pragma once
// What the kernel benchmarks share: OpenBLAS's C entry points (the runtime,
// libopenblas0, is installed without dev headers, so the symbols used are
// declared here and the library is linked by file name) and random inputs.
#include <cstddef>
#include <random>
#include <vector>

extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int threads);
}

namespace reprox::bench {

// CBLAS_ORDER / CBLAS_TRANSPOSE values.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// n values drawn from N(0, sd^2).
inline std::vector<float> random_vec(std::mt19937& rng, size_t n, float sd) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace reprox::bench
