// The message Model::load throws for `dir`, or "(no error)" when it loads.
#pragma once

#include <stdexcept>
#include <string>

#include "engine/model/model.hpp"

namespace reprox::testutil {

inline std::string load_error(const std::string& dir, const engine::LoadOptions& options = {}) {
  try {
    engine::Model::load(dir, options);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace reprox::testutil
