// results/lenient.h: a field's value or a default, and a value's text in messages and reports.
#include <gtest/gtest.h>

#include "results/lenient.h"

namespace isolab {
namespace {

using nlohmann::json;

TEST(ResultsLenient, ValueOrDefault) {
  const json j = {{"s", "x"}, {"b", true}, {"n", 3}};
  EXPECT_EQ(results::str_or(j, "s"), "x");
  EXPECT_EQ(results::str_or(j, "n", "d"), "d");
  EXPECT_EQ(results::str_or(j, "none", "d"), "d");
  EXPECT_EQ(results::str_or(json::array(), "s", "d"), "d");
  EXPECT_TRUE(results::bool_or(j, "b", false));
  EXPECT_TRUE(results::bool_or(j, "s", true));
  EXPECT_FALSE(results::bool_or(j, "none", false));
  EXPECT_EQ(results::field(j, "n"), 3);
  EXPECT_TRUE(results::field(j, "none").is_null());
  EXPECT_TRUE(results::field(json("s"), "n").is_null());
}

TEST(ResultsLenient, Texts) {
  EXPECT_EQ(results::value_text("a b"), "a b");
  EXPECT_EQ(results::value_text(nullptr), "(absent)");
  EXPECT_EQ(results::value_text(json::array({1, "x"})), "[1,\"x\"]");
  EXPECT_EQ(results::value_text(std::string("\xff")), "\xff");
  EXPECT_EQ(results::value_text(json::array({std::string("\xff")})), "[\"\xef\xbf\xbd\"]");
  EXPECT_EQ(results::scalar_text("a\n"), "a\n");
  EXPECT_EQ(results::scalar_text(2.5), "2.5");
  EXPECT_EQ(results::scalar_text(false), "false");
  EXPECT_EQ(results::scalar_text(nullptr), "");
  EXPECT_EQ(results::scalar_text(json::object()), "");
}

}  // namespace
}  // namespace isolab
