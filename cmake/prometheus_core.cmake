# prometheus-cpp::core alone. The package's own config looks up civetweb,
# zlib and curl for its pull and push parts, which reprox does not use
# (/metrics is served by reprox's own server), so a host without them could
# not configure. This finds the core library and its headers and defines
# the same imported target.
find_path(REPROX_PROMETHEUS_INCLUDE_DIR prometheus/registry.h REQUIRED)
find_library(REPROX_PROMETHEUS_CORE_LIBRARY NAMES prometheus-cpp-core REQUIRED)
if(NOT TARGET prometheus-cpp::core)
  add_library(prometheus-cpp::core UNKNOWN IMPORTED)
  set_target_properties(prometheus-cpp::core PROPERTIES
    IMPORTED_LOCATION "${REPROX_PROMETHEUS_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${REPROX_PROMETHEUS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
