// Boost.Context links and switches stacks in every build config (fcontext by
// default, ucontext with ASan annotations under --config=asan).
#include <utility>
#include <vector>

#include "boost/context/fiber.hpp"
#include "gtest/gtest.h"

namespace {

namespace ctx = boost::context;

TEST(BoostContextTest, FiberResumesAndYieldsInOrder) {
  std::vector<int> trace;
  ctx::fiber f{[&trace](ctx::fiber&& caller) {
    for (int i = 0; i < 3; ++i) {
      trace.push_back(i);
      caller = std::move(caller).resume();
    }
    return std::move(caller);
  }};
  for (int i = 0; i < 4 && f; ++i) {
    trace.push_back(100 + i);
    f = std::move(f).resume();
  }
  EXPECT_FALSE(static_cast<bool>(f));  // the fiber finished
  EXPECT_EQ(trace, (std::vector<int>{100, 0, 101, 1, 102, 2, 103}));
}

}  // namespace
