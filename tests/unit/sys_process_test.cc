#include <gtest/gtest.h>

#include "sys/process.h"

namespace isolab {
TEST(ArgvDisplay, QuotesMetacharacters) {
  EXPECT_EQ(argv_to_display({"echo", "a b", "it's"}), "echo 'a b' 'it'\\''s'");
}
}  // namespace isolab
