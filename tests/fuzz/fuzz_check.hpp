// Property checks for the fuzz targets: a failed check prints what was
// expected and aborts, which libFuzzer reports as a crash with the input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                        \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: property violated: %s (%s)\n", __FILE__, __LINE__, \
                   what, #cond);                                                      \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)
