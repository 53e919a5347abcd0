#include "engine/model/libtorch_cpu_class.hpp"

#include <cpuid.h>

#include <cstdlib>

namespace reprox::engine {
namespace {

// CPUID leaf 7, sub-leaf 0, EDX bit 22: AMX-BF16 (GCC 12's
// __builtin_cpu_supports does not name it).
bool has_amx_bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return (d >> 22) & 1u;
}

std::string env_suffix(const char* label, const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr && *v != '\0' ? std::string("+") + label + "=" + v : std::string();
}

}  // namespace

std::string libtorch_cpu_class() {
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && fma;
  std::string name = avx512 ? "avx512" : (__builtin_cpu_supports("avx2") && fma ? "avx2" : "default");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) name += "+bf16";
  if (avx512 && has_amx_bf16()) name += "+amx";
  name += env_suffix("aten", "ATEN_CPU_CAPABILITY");
  name += env_suffix("onednn", std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr ? "ONEDNN_MAX_CPU_ISA" : "DNNL_MAX_CPU_ISA");
  return name;
}

}  // namespace reprox::engine
