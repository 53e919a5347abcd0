#pragma once
// Which of libtorch's CPU kernels this host runs, as a short name. Fast mode
// on the CPU computes with libtorch's kernels, whose bits depend on it:
// ATen's vectorised kernels come in a DEFAULT, an AVX2 and an AVX-512
// version (each with its own reduction order), and oneDNN computes bfloat16
// products with the CPU's own bf16 dot-product or AMX instructions where it
// has them. So the same seeded request in fast mode gives the same bytes on
// hosts of one class, not across classes; strict mode's kernels give the
// same bits on every class.
//
// The name is "default", "avx2" or "avx512" (ATen's choice, by the rule of
// libtorch 1.13's DispatchStub), then "+bf16" (avx512_bf16) and "+amx"
// (amx_bf16) where oneDNN would use them, then "+aten=V" and "+onednn=V"
// when ATEN_CPU_CAPABILITY or ONEDNN_MAX_CPU_ISA (DNNL_MAX_CPU_ISA) set a
// ceiling. Pure; reads the CPU's flags and the environment.
#include <string>

namespace reprox::engine {

std::string libtorch_cpu_class();

}  // namespace reprox::engine
