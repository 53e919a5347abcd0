#pragma once
// Strict-mode CPU kernels: row-, batch-, thread- and ISA-invariant fp32 math.
//
// Contract shared by every function here: each output element is computed by
// a fixed sequence of IEEE operations that depends only on that element's own
// inputs (its row, its key positions), never on how many rows are processed
// together, where a row sits in the batch, the thread count, the KV capacity,
// or which instruction set runs it. The scalar, AVX2 and AVX-512 paths give
// the same bits (tested), so the ISA is not part of the numeric mode.
//
// The canonical reductions (documented in internal/canonical.hpp):
//   dot(a, b, n): 16 lane partial sums, lane l accumulates a[k]*b[k] for
//     k = l, l+16, l+32, ... in increasing k with fused multiply-add, then the
//     lanes are combined by the fixed tree (l, l+8) -> (l, l+4) -> (l, l+2) -> (0, 1).
//   exp: own polynomial (internal/canonical.hpp), not libm.
//
// Buffers are plain fp32, row-major (weights may also be f16, bf16 or q8:
// see "weight storage"); no function allocates on the hot path
// except attention's per-thread score scratch (grows once). Functions are not
// reentrant across threads: the engine calls them from one thread, and they
// fan out over the kernel thread pool themselves.
#include <cstdint>
#include <functional>

namespace reprox::kernels {

// ---- configuration -------------------------------------------------------

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// The widest ISA this CPU supports (checked with __builtin_cpu_supports).
Isa best_isa();
// The ISA in use; defaults to best_isa(). set_isa() clamps to best_isa() and
// returns what it selected. Results are bitwise the same for every ISA; this
// exists for tests and benchmarks.
Isa active_isa();
Isa set_isa(Isa isa);
const char* isa_name(Isa isa);

// Threads used by linear() and causal_attention() (default 1). Work is split
// over output columns / (head, query) pairs only, never over a reduction, so
// results do not depend on it.
void set_num_threads(int threads);
int num_threads();

// Calls fn(i) once for each i in [0, tasks) on the kernel threads (the caller
// included) and returns when all have finished; for independent per-row work
// outside the kernels (e.g. sampling each sequence of a batch). fn must not
// call back into the kernels.
void parallel_for(int tasks, const std::function<void(int)>& fn);

// Identifies the numeric mode for system_fingerprint; changes whenever a
// kernel's operation sequence changes.
const char* numeric_mode_id();

// ---- weight storage ------------------------------------------------------
//
// linear() reads its weight matrix w [N, K] in one of four storage types.
// Whatever the type, each weight is first turned into an fp32 value w' and
// the output element is the canonical fp32 dot over w' (the same FMA order,
// the same tree), so a 16-bit or q8 linear equals, bit for bit, the fp32
// linear on the widened / dequantized matrix:
//   kF32:  w' = w.
//   kF16:  w' = IEEE half -> float (exact).
//   kBF16: w' = the 16 bits shifted left by 16 (exact).
//   kQ8:   blocks of 32 along K, one fp32 scale each; w' = float(q) * scale,
//          one fp32 multiplication (rounded to nearest even). A row of K
//          weights is q8_row_bytes(K) bytes: ceil(K/32) fp32 scales (little
//          endian) followed by K int8 values; rows are back to back.
// Activations, norms and caches stay fp32 whatever the weight type.
enum class WeightType { kF32 = 0, kF16 = 1, kBF16 = 2, kQ8 = 3 };

constexpr int64_t kQ8Block = 32;
constexpr int64_t q8_blocks(int64_t k) { return (k + kQ8Block - 1) / kQ8Block; }
constexpr int64_t q8_row_bytes(int64_t k) { return 4 * q8_blocks(k) + k; }
// Bytes of one weight row of k elements in storage type `type`.
int64_t weight_row_bytes(WeightType type, int64_t k);
// "f32", "f16", "bf16", "q8".
const char* weight_type_name(WeightType type);
// Names how a storage type is widened / quantized, for system_fingerprint
// next to numeric_mode_id(); changes whenever that does.
const char* weights_mode_id(WeightType type);

// A weight matrix [N, K] in storage type `type`: each row holds
// weight_row_bytes(type, K) bytes of weights, and rows start row_bytes
// apart (0: rows back to back; else >= weight_row_bytes(type, K), the bytes
// in between never read). Implicitly made from a plain fp32 pointer.
struct WeightMatrix {
  WeightType type = WeightType::kF32;
  const void* data = nullptr;
  int64_t row_bytes = 0;
  WeightMatrix() = default;
  WeightMatrix(const float* w) : data(w) {}  // NOLINT: fp32 is the common case
  WeightMatrix(WeightType t, const void* d, int64_t stride_bytes = 0) : type(t), data(d), row_bytes(stride_bytes) {}
};

// The row distance to store a [*, k] matrix of `type` with, for speed; the
// bits of every result are the same at any distance. It is the row's own
// bytes, plus one 64-byte cache line when that is a multiple of 4 KiB: a
// GEMM tile streams 16 weight rows side by side, and rows a multiple of
// 4 KiB apart all map to one set of the L1 cache (64 sets of 64 bytes, 8 or
// 12 ways), which then holds too few of them; the extra line puts the 16
// rows in 16 different sets. (One-row f16 decode with rows of 2,048
// weights: 1.7-2.5x faster from L2, 1.1-1.5x from memory; a batch of 8
// rows, 4 x 4 tiles, 0.93-0.97x.)
int64_t padded_row_bytes(WeightType type, int64_t k);

// Q8 quantization of w [n, k] fp32 into out [n, q8_row_bytes(k)] bytes, per
// block of 32 (the last one may be shorter): amax = max |w|,
// scale = amax / 127 (fp32 division), q = roundf(w / scale) (half away from
// zero, clamped to [-127, 127]); q = 0 where scale is 0. Portable scalar code,
// so the bytes never depend on the CPU.
void quantize_q8(const float* w, int64_t n, int64_t k, void* out);

// out[i, :] = the fp32 values w' (see above) of row rows[i] of w [*, k],
// for i < count; out is [count, k] contiguous. Embedding lookups.
void widen_rows(const WeightMatrix& w, int64_t k, const int64_t* rows, int64_t count, float* out);

// ---- ops (same shapes and semantics as engine/model/ops.hpp) -------------

// y[M, N] = x[M, K] . w[N, K]^T (+ bias[N] if bias != nullptr).
// x rows are x_stride floats apart (x_stride >= K), w is contiguous [N, K]
// (the torch nn.Linear layout), y rows are y_stride floats apart (>= N).
// y[m, n] = dot(x[m, :], w[n, :], K) + bias[n]  (dot as above; bias added last).
void linear(const float* x, int64_t m, int64_t k, int64_t x_stride, const float* w, int64_t n, const float* bias,
            float* y, int64_t y_stride);
// Contiguous convenience form (x_stride = k, y_stride = n).
void linear(const float* x, int64_t m, int64_t k, const float* w, int64_t n, const float* bias, float* y);
// Any weight storage type (see WeightMatrix); the same contract and order.
void linear(const float* x, int64_t m, int64_t k, int64_t x_stride, const WeightMatrix& w, int64_t n,
            const float* bias, float* y, int64_t y_stride);

// One of several projections of the same x for linear_many(): w contiguous
// [n, k], bias [n] or nullptr, y contiguous [m, n].
struct Projection {
  WeightMatrix w;
  int64_t n;
  const float* bias;
  float* y;
};
// y_i = linear(x, m, k, w_i, n_i, bias_i) for each of `count` projections of
// the contiguous x [m, k], in one fan-out over the kernel threads (fewer
// wake-ups than separate calls; the same bits).
void linear_many(const float* x, int64_t m, int64_t k, const Projection* outs, int count);

// y[r, :] = x[r, :] * (1 / sqrt(dot(x_r, x_r, d) / d + eps)) * weight, rows contiguous
// [rows, d]; y may alias x. Per element: (x * inv_rms) * weight, two roundings.
void rms_norm(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y);

// y = (x - mean) * (1 / sqrt(var + eps)) * weight + bias over the last dim;
// mean = sum(x)/d, var = sum((x-mean)^2)/d, both sums in the canonical 16-lane
// order (the first with a plain add, the second as dot(x-mean, x-mean)).
// bias may be nullptr. y may alias x.
void layer_norm(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps, float* y);

// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i]. out may alias either input.
void silu_mul(const float* gate, const float* up, int64_t count, float* out);

// GPT-2 gelu_new: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// evaluated as the identical x / (1 + exp(-2u)). out may alias x.
void gelu_tanh(const float* x, int64_t count, float* out);

// In-place rotate-half RoPE on x[heads, t, d]: element (h, i, j) lives at
// x[h * head_stride + i * token_stride + j], j < d contiguous. cos/sin are
// [t, d/2] contiguous. For j < d/2, with x1 = x[j], x2 = x[j + d/2]:
//   x[j] = x1*c - x2*s,  x[j + d/2] = x2*c + x1*s  (products rounded, no FMA).
void apply_rope(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                const float* cos, const float* sin);

// Causal GQA attention, fp32.
//   q: element (head h, query i, j) at q[h * q_head_stride + i * q_token_stride + j]
//   k, v: element (kv head g, key position p, j) at k[g * kv_head_stride + p * head_dim + j]
//         (a [n_kv_heads, capacity, head_dim] cache: kv_head_stride = capacity * head_dim)
//   out: [t, n_heads * head_dim] contiguous, out[i, h * head_dim + j].
// Query i sits at absolute position q_offset + i and sees keys 0..q_offset+i.
// Query head h uses kv head h / (n_heads / n_kv_heads).
// Per (h, i), with P = q_offset + i:
//   s_p = dot(q, k_p, head_dim) * (1/sqrt(head_dim))  for p = 0..P
//   m = max_p s_p;  e_p = exp(s_p - m)
//   l = canonical 16-lane sum of e_p with lane = p mod 16 (absolute position)
//   out = (sum_{p=0..P} e_p * v_p, accumulated with FMA in increasing p) / l
// so a token's output depends only on its position, q, and keys/values
// 0..P: prefill, decode after a cached prefix, and any capacity agree bitwise.
struct AttentionArgs {
  const float* q = nullptr;
  int64_t n_heads = 0, t = 0, head_dim = 0;
  int64_t q_head_stride = 0, q_token_stride = 0;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t n_kv_heads = 0;
  int64_t kv_head_stride = 0;
  int64_t q_offset = 0;
  float* out = nullptr;
  bool on_calling_thread = false;  // skip the kernel threads (e.g. inside parallel_for)
};
void causal_attention(const AttentionArgs& args);

}  // namespace reprox::kernels
