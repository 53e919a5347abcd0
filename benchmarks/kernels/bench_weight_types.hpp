#pragma once
// The strict linear with f32, f16, bf16 and q8 weight storage: decode (M = 1,
// weights streamed cold from DRAM) and prefill (M = 128 / 512), weight GB/s
// counted in the storage's own bytes, and each type's speed-up over f32;
// then rows a multiple of 4 KiB long, packed against padded_row_bytes().
namespace reprox::bench {

void bench_weight_types(bool quick);

}  // namespace reprox::bench
