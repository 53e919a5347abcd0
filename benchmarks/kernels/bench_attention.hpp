#pragma once
// Strict causal attention and the row-wise ops on the active ISA, against the
// scalar path (the same bits) and an OpenBLAS-based attention (two sgemm per
// head around a plain softmax: what a fast, non-invariant CPU engine runs),
// in the same run. Decode steps read the whole KV cache once, so they are
// also set against the read-only stream bandwidth measured by the caller.
namespace reprox::bench {

// read_gbps: the read-only stream bandwidth, GB/s.
void bench_attention(bool quick, double read_gbps);

}  // namespace reprox::bench
