#include "proxy/cache/stored_generation.hpp"

namespace reprox {

const std::shared_ptr<const Generation>& StoredGeneration::shared() const {
  if (!decoded_ && bytes_) decoded_ = std::make_shared<const Generation>(encoded_.decode());
  return decoded_;
}

}  // namespace reprox
