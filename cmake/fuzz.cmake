# REPROX_FUZZ: the libFuzzer targets of tests/fuzz (clang only).
# When ON, every target of the build is compiled with
# -fsanitize=fuzzer-no-link,address,undefined, so the libraries the fuzz
# targets link carry coverage instrumentation and the sanitizers; the fuzz
# targets link with -fsanitize=fuzzer (tests/fuzz/CMakeLists.txt). Use a
# build directory of its own, e.g.
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DREPROX_FUZZ=ON \
#     -DREPROX_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build build-fuzz --target reprox_fuzz_all
option(REPROX_FUZZ "Build libFuzzer targets (clang only)" OFF)
if(REPROX_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "REPROX_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  # Line tables only: crash reports are symbolized, at half the compile time
  # of full debug information.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -gline-tables-only)
  add_link_options(-fsanitize=address,undefined)
endif()
