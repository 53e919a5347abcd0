// AVX2 GEMM in the canonical order: a 16-lane partial sum is a pair of ymm
// registers (lanes 0..7 and 8..15); each dot finished with the canonical
// tree. Weights of any storage type are widened to fp32 (f16 with F16C's
// vcvtph2ps, bf16 by a 16-bit shift, q8 by sign extension, conversion and
// one multiply by the block's scale), the same values as
// canonical::widen_row: in registers for a few rows of x (one row times four
// columns per pass), into fp32 panels for more (three rows times four).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "engine/kernels/internal/avx2_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx2::head_mask8;
using avx2::tree;

// w'[kk + 8h .. kk + 8h + 8) of a weight row (see weight_loads_avx512.hpp).
// `src` points at the row's element kk (or at a zero-padded copy of the
// tail); q8 reads its scale from the row itself.
template <WeightType T>
inline __m256 load8(const uint8_t* src, const uint8_t* row, int64_t kk, int h) {
  if constexpr (T == WeightType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(src) + 8 * h);
  } else if constexpr (T == WeightType::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * h)));
  } else if constexpr (T == WeightType::kBF16) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * h)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  } else {
    float s;
    std::memcpy(&s, row + 4 * (kk / kQ8Block), sizeof s);
    const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 8 * h)));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s));
  }
}

constexpr int64_t elem_bytes(WeightType t) {
  return t == WeightType::kF32 ? 4 : (t == WeightType::kQ8 ? 1 : 2);
}

constexpr int kCols = 4;

// Where the loads at kk of a weight row stream from (q8: its values sit
// after the row's scales).
template <WeightType T>
inline const uint8_t* stream_at(const uint8_t* row, int64_t kk, int64_t k) {
  return row + (T == WeightType::kQ8 ? 4 * q8_blocks(k) + kk : elem_bytes(T) * kk);
}

// out[c] = dot(x, wc[c]) over k for the kCols weight rows wc. Prefetches (to
// L1) the lines at kk of the npf rows pf, and for q8 their scales too.
template <WeightType T>
inline void tile(const float* x, const uint8_t* const* wc, const uint8_t* const* pf, int npf, int64_t k,
                 float* out) {
  constexpr int64_t eb = elem_bytes(T);
  __m256 lo[kCols], hi[kCols];
  for (int c = 0; c < kCols; ++c) lo[c] = hi[c] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    if ((kk * eb) % 64 == 0) {  // once per cache line of the stream
      for (int i = 0; i < npf; ++i) _mm_prefetch(reinterpret_cast<const char*>(stream_at<T>(pf[i], kk, k)), _MM_HINT_T0);
      if (T == WeightType::kQ8 && kk % (16 * kQ8Block) == 0) {  // 16 scales per line
        for (int i = 0; i < npf; ++i) _mm_prefetch(reinterpret_cast<const char*>(pf[i] + 4 * (kk / kQ8Block)), _MM_HINT_T0);
      }
    }
    const __m256 xl = _mm256_loadu_ps(x + kk), xh = _mm256_loadu_ps(x + kk + 8);
    for (int c = 0; c < kCols; ++c) {
      const uint8_t* src = stream_at<T>(wc[c], kk, k);
      lo[c] = _mm256_fmadd_ps(xl, load8<T>(src, wc[c], kk, 0), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, load8<T>(src, wc[c], kk, 1), hi[c]);
    }
  }
  if (kk < k) {  // the tail's raw bytes copied into a zeroed block: missing lanes are +0
    const __m256i ml = head_mask8(k - kk), mh = head_mask8(k - kk - 8);
    const __m256 xl = _mm256_maskload_ps(x + kk, ml), xh = _mm256_maskload_ps(x + kk + 8, mh);
    for (int c = 0; c < kCols; ++c) {
      alignas(32) uint8_t pad[64] = {};
      std::memcpy(pad, stream_at<T>(wc[c], kk, k), static_cast<size_t>(eb * (k - kk)));
      lo[c] = _mm256_fmadd_ps(xl, load8<T>(pad, wc[c], kk, 0), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, load8<T>(pad, wc[c], kk, 1), hi[c]);
    }
  }
  for (int c = 0; c < kCols; ++c) out[c] = tree(lo[c], hi[c]);
}

// ---- the blocked path, for several rows of x ----
// The row-at-a-time tile above widens every weight again for each row of x
// (for q8 three vector operations per eight weights, beside one FMA). With
// several rows, weights are widened once per block of kRowBlock rows into
// fp32 panels, and 3 x 4 register tiles (three rows of x by four columns)
// run the canonical dot over them:
//   for a block of rows, for a block of kBlockCols columns, for each chunk
//   of kChunk along k: widen the chunk of the block's weight rows (12 KB,
//   stays in L1); for each three rows, for each tile of four columns, for
//   each half of the 16 lanes: resume the tile's partial sums of that half
//   (twelve ymm accumulators), add the chunk, set them aside.
// Lanes 0..7 and 8..15 never mix before the tree, so a tile takes them in
// two passes, each with one register per output: seven loads per twelve
// FMAs. Each lane still takes its products in increasing k, and the tree
// runs once after the last chunk, so the bits are those of tile() above.
constexpr int kTileRows = 3;
constexpr int kTileCols = 4;
constexpr int kBlockTiles = 3;
constexpr int64_t kBlockCols = kTileCols * kBlockTiles;
constexpr int64_t kChunk = 256;  // a multiple of 16 lanes and of the q8 block
constexpr int64_t kHalf = kChunk / 2;
constexpr int64_t kRowBlock = 48;
static_assert(kChunk % 16 == 0 && kChunk % kQ8Block == 0);

// Weights of one row at k in [k0, k0 + len) widened to fp32, by halves:
// out[h * kHalf + 8 * j + l] is the weight at k0 + 16 * j + 8 * h + l. The
// lanes of the last step past k are +0, as tile()'s zero-padded tail.
template <WeightType T>
inline void widen_chunk(const uint8_t* row, int64_t k, int64_t k0, int64_t len, float* out) {
  constexpr int64_t eb = elem_bytes(T);
  int64_t kk = k0;
  for (; kk + 16 <= k0 + len; kk += 16) {
    const uint8_t* src = stream_at<T>(row, kk, k);
    _mm256_store_ps(out + (kk - k0) / 2, load8<T>(src, row, kk, 0));
    _mm256_store_ps(out + kHalf + (kk - k0) / 2, load8<T>(src, row, kk, 1));
  }
  if (kk < k0 + len) {
    alignas(32) uint8_t pad[64] = {};
    std::memcpy(pad, stream_at<T>(row, kk, k), static_cast<size_t>(eb * (k0 + len - kk)));
    _mm256_store_ps(out + (kk - k0) / 2, load8<T>(pad, row, kk, 0));
    _mm256_store_ps(out + kHalf + (kk - k0) / 2, load8<T>(pad, row, kk, 1));
  }
}

// One half of the 16-lane partial sums of R rows by kTileCols columns.
template <int R>
using HalfAcc = __m256[R][kTileCols];

// acc += the products of x rows xr[0..R) with the widened chunk `panel`
// (kTileCols rows of kChunk floats, as widen_chunk) for the lanes of half h
// (k = k0 + 16 * j + 8 * h + l), lane by lane in increasing k. Only the
// chunk that ends at k may end in a partial step; its missing x lanes are
// masked loads of +0.
template <int R>
inline void add_half(const float* const* xr, const float* panel, int h, int64_t k0, int64_t len, HalfAcc<R>& acc) {
  const float* x[R];
  for (int r = 0; r < R; ++r) x[r] = xr[r] + k0 + 8 * h;
  const float* w = panel + h * kHalf;
  // acc[r][c] += xv[r] * the panel's column c at step offset s.
  auto fma_step = [&](const __m256 (&xv)[R], int64_t s) {
    for (int c = 0; c < kTileCols; ++c) {
      __m256 wv = _mm256_load_ps(w + c * kChunk + s / 2);
      // One load shared by the R rows: without this the compiler folds it
      // into every FMA, and the loads, not the FMAs, bound the loop.
      __asm__("" : "+x"(wv));
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(xv[r], wv, acc[r][c]);
    }
  };
  int64_t s = 0;
  for (; s + 16 <= len; s += 16) {
    __m256 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm256_loadu_ps(x[r] + s);
    fma_step(xv, s);
  }
  if (s < len) {
    const __m256i m = head_mask8(len - s - 8 * h);
    __m256 xv[R];
    for (int r = 0; r < R; ++r) xv[r] = _mm256_maskload_ps(x[r] + s, m);
    fma_step(xv, s);
  }
}

// Where a block's tiles keep their partial sums between chunks.
struct BlockState {
  alignas(32) float panel[kBlockTiles][kTileCols][kChunk];
  alignas(32) float partial[kRowBlock][kBlockTiles][kTileCols][16];  // lanes 0..15
};

// One chunk for rows [r, r + R) of the row block (r relative to r0) over
// the block's `tiles` tiles from column b0 (`cols` of them real).
template <int R>
void chunk_rows(const GemmArgs& a, BlockState& st, int64_t r0, int64_t r, int64_t b0, int64_t cols, int tiles,
                int64_t k0, int64_t len) {
  const float* xr[R];
  for (int i = 0; i < R; ++i) xr[i] = a.x + (r0 + r + i) * a.x_stride;
  const bool first = k0 == 0, last = k0 + len == a.k;
  for (int t = 0; t < tiles; ++t) {
    for (int h = 0; h < 2; ++h) {
      HalfAcc<R> acc;
      for (int i = 0; i < R; ++i)
        for (int c = 0; c < kTileCols; ++c)
          acc[i][c] = first ? _mm256_setzero_ps() : _mm256_load_ps(st.partial[r + i][t][c] + 8 * h);
      add_half<R>(xr, &st.panel[t][0][0], h, k0, len, acc);
      for (int i = 0; i < R; ++i)
        for (int c = 0; c < kTileCols; ++c) _mm256_store_ps(st.partial[r + i][t][c] + 8 * h, acc[i][c]);
    }
    if (!last) continue;
    for (int i = 0; i < R; ++i) {
      for (int c = 0; c < kTileCols && kTileCols * t + c < cols; ++c) {
        const int64_t col = b0 + kTileCols * t + c;
        const float* p = st.partial[r + i][t][c];
        const float v = tree(_mm256_load_ps(p), _mm256_load_ps(p + 8));
        a.y[(r0 + r + i) * a.y_stride + col] = a.bias != nullptr ? v + a.bias[col] : v;
      }
    }
  }
}

// Prefetches (to L2) the bytes widen_chunk() reads from a row at [k0, k0 + len).
template <WeightType T>
inline void prefetch_chunk(const uint8_t* row, int64_t k, int64_t k0, int64_t len) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(stream_at<T>(row, k0, k)) & ~uintptr_t{63};
  const uintptr_t end = reinterpret_cast<uintptr_t>(stream_at<T>(row, k0 + len, k));
  for (uintptr_t p = begin; p < end; p += 64) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1);
  if (T == WeightType::kQ8) _mm_prefetch(reinterpret_cast<const char*>(row + 4 * (k0 / kQ8Block)), _MM_HINT_T1);
}

// The weight rows of one block of columns and one chunk of k.
struct BlockChunk {
  int64_t b0, cols, k0, len;
  int tiles() const { return static_cast<int>((cols + kTileCols - 1) / kTileCols); }
  // Column of the block's slot c of tile t: slots past the block repeat its last column.
  int64_t column(int t, int c) const { return b0 + std::min<int64_t>(kTileCols * t + c, cols - 1); }
};

template <WeightType T>
void gemm_blocked(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  BlockState st;  // 48 KB of stack
  auto chunk_at = [&](int64_t b0, int64_t k0) {
    return BlockChunk{b0, std::min<int64_t>(kBlockCols, n_end - b0), k0, std::min<int64_t>(kChunk, a.k - k0)};
  };
  for (int64_t r0 = 0; r0 < a.m; r0 += kRowBlock) {
    const int64_t rows = std::min<int64_t>(kRowBlock, a.m - r0);
    for (int64_t b0 = n_begin; b0 < n_end; b0 += kBlockCols) {
      for (int64_t k0 = 0; k0 < a.k; k0 += kChunk) {
        const BlockChunk cur = chunk_at(b0, k0);
        for (int t = 0; t < cur.tiles(); ++t)
          for (int c = 0; c < kTileCols; ++c)
            widen_chunk<T>(a.w + cur.column(t, c) * a.w_row_bytes, a.k, k0, cur.len, st.panel[t][c]);
        // The next chunk's weights load while this one computes, a column or
        // so per three rows: from memory, a dozen rows read a few lines
        // each escape the hardware prefetcher, and all their lines at once
        // overflow the misses the core can have in flight.
        const int64_t next_b0 = k0 + kChunk < a.k ? b0 : (b0 + kBlockCols < n_end ? b0 + kBlockCols : n_begin);
        const BlockChunk next = chunk_at(next_b0, k0 + kChunk < a.k ? k0 + kChunk : 0);
        const int64_t groups = (rows + kTileRows - 1) / kTileRows;
        int64_t fetched = 0;  // columns of `next` prefetched so far
        auto prefetch_until = [&](int64_t count) {
          for (; fetched < count; ++fetched)
            prefetch_chunk<T>(a.w + (next.b0 + fetched) * a.w_row_bytes, a.k, next.k0, next.len);
        };
        int64_t r = 0;
        for (; r + kTileRows <= rows; r += kTileRows) {
          prefetch_until(next.cols * (r / kTileRows + 1) / groups);
          chunk_rows<kTileRows>(a, st, r0, r, b0, cur.cols, cur.tiles(), k0, cur.len);
        }
        prefetch_until(next.cols);
        if (rows - r == 2) chunk_rows<2>(a, st, r0, r, b0, cur.cols, cur.tiles(), k0, cur.len);
        if (rows - r == 1) chunk_rows<1>(a, st, r0, r, b0, cur.cols, cur.tiles(), k0, cur.len);
      }
    }
  }
}

// Rows of x from which the blocked path is taken. Widening once pays soonest
// for q8; f16 widens in one instruction and streams half of f32's bytes, so
// the row-at-a-time tile keeps it longer. Measured on an AVX2-only EPYC
// (reprox_bench_kernels --weight-types): from these counts up the blocked
// path was as fast or faster, hot or from memory; below them slower.
template <WeightType T>
constexpr int64_t blocked_min_rows() {
  switch (T) {
    case WeightType::kQ8: return 4;
    case WeightType::kF16: return 32;
    default: return 8;
  }
}

// Few rows: column tiles outer, rows inner; a tile's kCols weight rows stay in L1
// across the rows of x, so w streams from memory once whatever m is. The
// first row's pass prefetches the next tile's rows: the hardware prefetcher
// alone keeps too few lines in flight for rows read kCols at a time.
template <WeightType T>
void gemm(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  if (a.m >= blocked_min_rows<T>() && a.k > 0) return gemm_blocked<T>(a, n_begin, n_end);  // k = 0: no chunk
  for (int64_t c0 = n_begin; c0 < n_end; c0 += kCols) {
    const int64_t cols = std::min<int64_t>(kCols, n_end - c0);
    const uint8_t* wc[kCols];
    const uint8_t* pf[kCols];
    for (int c = 0; c < kCols; ++c) {
      wc[c] = a.w + (c0 + std::min<int64_t>(c, cols - 1)) * a.w_row_bytes;
      pf[c] = a.w + std::min<int64_t>(c0 + kCols + c, a.n - 1) * a.w_row_bytes;
    }
    for (int64_t r = 0; r < a.m; ++r) {
      float out[kCols];
      tile<T>(a.x + r * a.x_stride, wc, pf, r == 0 ? kCols : 0, a.k, out);
      float* y = a.y + r * a.y_stride;
      for (int64_t c = 0; c < cols; ++c) y[c0 + c] = a.bias != nullptr ? out[c] + a.bias[c0 + c] : out[c];
    }
  }
}

}  // namespace

void gemm_avx2(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  switch (a.wtype) {
    case WeightType::kF16: gemm<WeightType::kF16>(a, n_begin, n_end); break;
    case WeightType::kBF16: gemm<WeightType::kBF16>(a, n_begin, n_end); break;
    case WeightType::kQ8: gemm<WeightType::kQ8>(a, n_begin, n_end); break;
    default: gemm<WeightType::kF32>(a, n_begin, n_end);
  }
}

}  // namespace reprox::kernels::internal
