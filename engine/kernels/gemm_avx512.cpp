// AVX-512 GEMM: y[r, c] = dot(x[r, :], w[c, :]) + bias[c] in the canonical
// order. A register tile holds 16 accumulators (R rows x 16/R columns), each
// a 16-lane partial sum over k; reduce16() turns the 16 of them into one
// vector of finished dots. Tiles only change which elements share a register
// pass, never an element's own operation sequence, so rows computed alone
// and inside any batch give the same bits. Weights of any storage type are
// widened to fp32 in registers (internal/weight_loads_avx512.hpp) right
// before their FMA; the accumulation order is the fp32 one.
#include <algorithm>

#include "engine/kernels/internal/avx512_math.hpp"
#include "engine/kernels/internal/paths.hpp"
#include "engine/kernels/internal/weight_loads_avx512.hpp"

namespace reprox::kernels::internal {
namespace {

using avx512::acc_slot;

// Returns lane r * (16/R) + c = dot(xr[r], wc[c]) over k; wc[c] are weight
// rows of type T. Prefetches (to L1) the k-block at kk of the npf weight
// rows pf[0..npf).
template <int R, WeightType T>
inline __m512 tile(const float* const* xr, const uint8_t* const* wc, const uint8_t* const* pf, int npf, int64_t k) {
  using Load = avx512::WeightLoad<T>;
  constexpr int C = 16 / R;
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    __m512 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm512_loadu_ps(xr[r] + kk);
    if ((kk * Load::kBytes) % 64 == 0) {  // once per cache line of the narrower types
      for (int i = 0; i < npf; ++i) _mm_prefetch(reinterpret_cast<const char*>(Load::at(pf[i], kk, k)), _MM_HINT_T0);
    }
    for (int c = 0; c < C; ++c) {
      const __m512 wv = Load::full(wc[c], kk, k);
      for (int r = 0; r < R; ++r) acc[acc_slot(r * C + c)] = _mm512_fmadd_ps(xv[r], wv, acc[acc_slot(r * C + c)]);
    }
  }
  if (kk < k) {  // zero-filled lanes add an exact +0 (accumulators are never -0)
    const __mmask16 m = avx512::head_mask(k - kk);
    __m512 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm512_maskz_loadu_ps(m, xr[r] + kk);
    for (int c = 0; c < C; ++c) {
      const __m512 wv = Load::tail(wc[c], kk, k, m);
      for (int r = 0; r < R; ++r) acc[acc_slot(r * C + c)] = _mm512_fmadd_ps(xv[r], wv, acc[acc_slot(r * C + c)]);
    }
  }
  return avx512::reduce16(acc);
}

// How far ahead (in column tiles) a 4-row pass prefetches weights. With few
// rows a tile is used only a few times, so the pass is bound by how many
// weight lines are in flight; prefetching ahead keeps more of them in flight
// than the hardware prefetcher does. The row blocks of one column tile share
// the prefetching (block b prefetches columns b, b + blocks, ...), so the
// memory stays busy while the later blocks compute from cache instead of
// idling after the first block. Measured end to end (reprox_bench_batching,
// smollm2 preset, C = 8, 2 threads): 1 tile ahead shared by the blocks 4.4-4.5x
// C = 1, 2 tiles 4.3x, 4 tiles 3.9x, the first block alone 4 tiles ahead 3.2-3.4x.
constexpr int64_t kPrefetchTiles = 1;

// Rows [r0, r0 + rows) x columns [c0, c0 + cols) with rows <= R, cols <= 16/R;
// missing rows/columns repeat the last valid one and are not stored. The bias
// add is the same single rounding as the scalar path's dot + bias[c]. The
// tile prefetches columns pf_first, pf_first + pf_step, ... (of C) of the
// tile kPrefetchTiles ahead; pf_step 0 prefetches nothing.
template <int R, WeightType T>
inline void run_tile(const GemmArgs& a, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int pf_first = 0,
                     int pf_step = 0) {
  constexpr int C = 16 / R;
  const uint8_t* pf[C];
  int npf = 0;
  if (pf_step > 0) {
    for (int c = pf_first; c < C; c += pf_step)
      pf[npf++] = a.w + std::min<int64_t>(c0 + kPrefetchTiles * C + c, a.n - 1) * a.w_row_bytes;
  }
  const float* xr[R];
  const uint8_t* wc[C];
  for (int r = 0; r < R; ++r) xr[r] = a.x + (r0 + std::min<int64_t>(r, rows - 1)) * a.x_stride;
  for (int c = 0; c < C; ++c) wc[c] = a.w + (c0 + std::min<int64_t>(c, cols - 1)) * a.w_row_bytes;
  __m512 res = tile<R, T>(xr, wc, pf, npf, a.k);
  if constexpr (R == 1) {
    const __mmask16 m = avx512::head_mask(cols);
    if (a.bias != nullptr) res = _mm512_add_ps(res, _mm512_maskz_loadu_ps(m, a.bias + c0));
    _mm512_mask_storeu_ps(a.y + r0 * a.y_stride + c0, m, res);
  } else {
    static_assert(R == 4, "row tiles are 1 or 4 rows");
    const __mmask8 m = static_cast<__mmask8>((1u << cols) - 1u);
    if (a.bias != nullptr) res = _mm512_add_ps(res, _mm512_broadcast_f32x4(_mm_maskz_loadu_ps(m, a.bias + c0)));
    alignas(64) float out[16];
    _mm512_store_ps(out, res);
    for (int64_t r = 0; r < rows; ++r) _mm_mask_storeu_ps(a.y + (r0 + r) * a.y_stride + c0, m, _mm_load_ps(out + 4 * r));
  }
}

constexpr int64_t kSmallM = 4;      // below this many rows: 1 x 16 tiles
constexpr int64_t kRowBlock = 64;   // x rows kept hot in L2 while a weight tile sits in L1
constexpr int64_t kColBlock = 256;  // columns per pass over a row block

// Rows one at a time against 16-column weight tiles; the tile (16 x k
// weights) stays in cache across the rows, so w streams from memory once.
// The first row's pass prefetches the next tile (the 16-bit and q8 rows
// are short, so the hardware prefetcher alone keeps too few lines in flight).
template <WeightType T>
void rows_by_one(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  constexpr int pf_step = T == WeightType::kF32 ? 0 : 1;
  for (int64_t c = n_begin; c < n_end; c += 16) {
    for (int64_t r = 0; r < a.m; ++r) {
      run_tile<1, T>(a, r, 1, c, std::min<int64_t>(16, n_end - c), 0, r == 0 ? pf_step : 0);
    }
  }
}

template <WeightType T>
void gemm(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  if (a.m < kSmallM) {
    rows_by_one<T>(a, n_begin, n_end);
    return;
  }
  // 4 x 4 tiles; a last block of fewer than 4 rows still runs as one tile
  // (its missing rows are computed and dropped) so that w streams only once.
  for (int64_t rb = 0; rb < a.m; rb += kRowBlock) {
    const int64_t rb_end = std::min(a.m, rb + kRowBlock);
    for (int64_t cb = n_begin; cb < n_end; cb += kColBlock) {
      const int64_t cb_end = std::min(n_end, cb + kColBlock);
      const int blocks = static_cast<int>((rb_end - rb + 3) / 4);
      const int pf_step = std::min(blocks, 4);
      for (int64_t c = cb; c < cb_end; c += 4) {
        const int64_t cols = std::min<int64_t>(4, cb_end - c);
        for (int64_t r = rb; r < rb_end; r += 4) {
          const int b = static_cast<int>((r - rb) / 4);
          run_tile<4, T>(a, r, std::min<int64_t>(4, rb_end - r), c, cols, b, b < 4 ? pf_step : 0);
        }
      }
    }
  }
}

}  // namespace

void gemm_avx512(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  switch (a.wtype) {
    case WeightType::kF16: gemm<WeightType::kF16>(a, n_begin, n_end); break;
    case WeightType::kBF16: gemm<WeightType::kBF16>(a, n_begin, n_end); break;
    case WeightType::kQ8: gemm<WeightType::kQ8>(a, n_begin, n_end); break;
    default: gemm<WeightType::kF32>(a, n_begin, n_end);
  }
}

}  // namespace reprox::kernels::internal
