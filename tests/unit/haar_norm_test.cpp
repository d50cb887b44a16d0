// The face detector's variance normalisation without double arithmetic (cuda/haar_norm.hpp, as the
// host compiles it) against OpenCV's double, bit for bit; tests/gpu/haar_norm_gpu_test.cu checks the
// device's build of the same functions.
#include <gtest/gtest.h>

#include "tests/haar_norm_support.hpp"

namespace pp::faces {
namespace {

TEST(HaarNorm, InverseSqrtEqualsOpenCvsDouble) {
  const std::vector<uint64_t> inputs = test::normInputs(uint64_t{1} << 22, 2'000'000, 500'000);
  size_t wrong = 0;
  uint64_t first = 0;
  for (uint64_t n : inputs)
    if (inverseSqrt(n) != test::openCvNorm(n)) first = wrong++ == 0 ? n : first;
  EXPECT_EQ(wrong, 0u) << "of " << inputs.size() << ", the first at n = " << first;
}

// From any start within 8 floats of the result (the device starts from rsqrtf, within 3).
TEST(HaarNorm, InverseSqrtFindsTheFloatFromAnEstimateNearby) {
  std::mt19937 random(8);
  size_t wrong = 0;
  for (uint64_t n : test::normInputs(1 << 16, 200'000, 100'000)) {
    const int offset = static_cast<int>(random() % 15) - 7;
    wrong +=
        norm_detail::inverseSqrtFrom(n, norm_detail::bitsOfFloat(test::openCvNorm(n)) + offset) != test::openCvNorm(n);
  }
  EXPECT_EQ(wrong, 0u);
}

// The hard inputs are really hard: near a midpoint the comparison declines (and double decides),
// and elsewhere it says on which side of the midpoint 1 / sqrt(n) lies.
TEST(HaarNorm, MidpointsTooCloseToCallAreLeftToDouble) {
  size_t close = 0, sides = 0;
  for (uint64_t n : test::normInputs(0, 0, 200'000)) {
    const uint32_t bits = norm_detail::bitsOfFloat(test::openCvNorm(n));
    const int above = norm_detail::againstMidpoint(n, bits), below = norm_detail::againstMidpoint(n, bits - 1);
    close += above == 0 || below == 0;
    sides += above == -1 && below == 1;  // the result's own midpoints enclose it
  }
  EXPECT_GT(close, 100u);
  EXPECT_GT(sides, 100'000u);
}

// Both ways, and both ways also where area * norm rounds to 0.1f itself.
TEST(HaarNorm, FlatWindowTestEqualsOpenCvsDouble) {
  size_t wrong = 0, below = 0, tiesBelow = 0, tiesAbove = 0;
  const std::vector<test::TenthCase> cases = test::tenthInputs();
  for (const test::TenthCase& c : cases) {
    const bool want = static_cast<double>(c.area) * c.norm < 1e-1;
    wrong += belowTenth(c.area, c.norm) != want;
    below += want;
    if (static_cast<float>(c.area) * c.norm == 0.1f) (want ? tiesBelow : tiesAbove) += 1;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(below, cases.size() / 4);
  EXPECT_LT(below, cases.size() * 3 / 4);
  EXPECT_GT(tiesBelow, 0u);
  EXPECT_GT(tiesAbove, 0u);
}

}  // namespace
}  // namespace pp::faces
