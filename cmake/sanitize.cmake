# REPROX_SANITIZE: build everything with GCC's sanitizers.
#   -DREPROX_SANITIZE=address,undefined   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DREPROX_SANITIZE=thread              ThreadSanitizer
# Every UB report aborts (-fno-sanitize-recover), so a finding fails its test.
# Use a separate build directory per sanitizer (tests/sanitize/run.sh does).
#
# Opt-outs, each for a stated reason:
#   - libtorch, OpenBLAS and libgomp come from Debian uninstrumented. ASan and
#     UBSan need nothing for them; TSan cannot see their synchronisation, so
#     the TSan run keeps libtorch on one intra-op thread (the strict engine's
#     own kernel pool does the parallel work, and it is instrumented; the
#     kernels' inner math loops are not, see engine/kernels/CMakeLists.txt).
#   - The strict kernels' AVX-512 masked loads and stores are intrinsics that
#     ASan does not instrument; the kernel tests check every tail against the
#     scalar path instead, so no suppression is needed.
set(REPROX_SANITIZE "" CACHE STRING "Sanitizers: '', 'address,undefined' or 'thread'")

# Debug information is line tables only (-g1): enough for symbolized stack
# traces in reports, and it halves compile time against full -g. ASan+UBSan
# builds at -O1, as ASan recommends (its tests are engine-free); TSan keeps
# the build type's optimisation, because its tests run the engine.
if(REPROX_SANITIZE)
  if(REPROX_SANITIZE STREQUAL "address,undefined" OR REPROX_SANITIZE STREQUAL "undefined,address")
    set(reprox_san_flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    set(reprox_san_codegen -O1 -g1)
  elseif(REPROX_SANITIZE STREQUAL "thread")
    set(reprox_san_flags -fsanitize=thread -fno-omit-frame-pointer)
    set(reprox_san_codegen -g1)
  else()
    message(FATAL_ERROR "REPROX_SANITIZE must be 'address,undefined' or 'thread', not '${REPROX_SANITIZE}'")
  endif()
  # After the build type's flags on the command line, so these win.
  add_compile_options(${reprox_san_flags} ${reprox_san_codegen})
  add_link_options(${reprox_san_flags})
  add_compile_definitions(REPROX_SANITIZER_BUILD=1)
  message(STATUS "reprox: sanitizers ${REPROX_SANITIZE}")
endif()
