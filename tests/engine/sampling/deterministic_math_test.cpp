#include "engine/sampling/deterministic_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace reprox::engine {
namespace {

double relative_error(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

TEST(DeterministicMath, ExpTracksLibmAcrossTheNormalRange) {
  double worst = 0.0;
  for (double x = -708.0; x <= 709.0; x += 0.0137) {
    worst = std::max(worst, relative_error(det_exp(x), std::exp(x)));
  }
  for (double x = -1.0; x <= 1.0; x += 1e-4) {
    worst = std::max(worst, relative_error(det_exp(x), std::exp(x)));
  }
  EXPECT_LT(worst, 5e-16);
}

TEST(DeterministicMath, ExpEdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(det_exp(0.0), 1.0);
  EXPECT_EQ(det_exp(-inf), 0.0);
  EXPECT_EQ(det_exp(-800.0), 0.0);
  EXPECT_EQ(det_exp(710.0), inf);
  EXPECT_TRUE(std::isnan(det_exp(std::nan(""))));
  // Subnormal results keep about the precision the format allows.
  for (double x = -744.0; x < -708.5; x += 0.37) {
    EXPECT_NEAR(det_exp(x), std::exp(x), 2 * std::numeric_limits<double>::denorm_min() +
                                             std::exp(x) * 1e-15);
  }
  EXPECT_NEAR(det_exp(709.7), std::exp(709.7), std::exp(709.7) * 1e-15);
}

TEST(DeterministicMath, LogTracksLibm) {
  double worst = 0.0;
  for (double x = 1e-300; x < 1e300; x *= 1.37) {
    if (std::fabs(x - 1.0) < 1e-3) continue;
    worst = std::max(worst, relative_error(det_log(x), std::log(x)));
  }
  for (double x = 0.5; x < 2.0; x += 1e-4) {
    const double want = std::log(x);
    if (want != 0.0) worst = std::max(worst, relative_error(det_log(x), want));
  }
  EXPECT_LT(worst, 5e-15);
}

TEST(DeterministicMath, LogEdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(det_log(1.0), 0.0);
  EXPECT_EQ(det_log(0.0), -inf);
  EXPECT_EQ(det_log(inf), inf);
  EXPECT_TRUE(std::isnan(det_log(-1.0)));
  EXPECT_NEAR(det_log(std::numeric_limits<double>::denorm_min()), -744.4400719213812, 1e-12);
}

}  // namespace
}  // namespace reprox::engine
