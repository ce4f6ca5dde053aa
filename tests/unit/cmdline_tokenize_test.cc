// docs/sources.md [k1]: tokenizing as lib/cmdline.c next_arg() does.
#include <gtest/gtest.h>

#include "base/error.h"
#include "cmdline/tokenize.h"

namespace isolab {
namespace {

TEST(CmdlineTokenize, K1SpacesAndSpecialValues) {
  auto t = tokenize_cmdline("   cpu=1,2,3   mem=0x2000;0x4000:$2  ");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "cpu");
  EXPECT_EQ(*t[0].value, "1,2,3");
  EXPECT_EQ(t[1].name, "mem");
  EXPECT_EQ(*t[1].value, "0x2000;0x4000:$2");
  EXPECT_FALSE(t[0].quoted);
}

TEST(CmdlineTokenize, K1CpuListKeptAsWritten) {
  auto t = tokenize_cmdline("isolcpus=1,2,10-20,100-2000:2/25");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(*t[0].value, "1,2,10-20,100-2000:2/25");
}

TEST(CmdlineTokenize, K1QuotedSpaces) {
  auto t = tokenize_cmdline(R"(foo=" many   spaces  " bar)");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(*t[0].value, " many   spaces  ");
  EXPECT_TRUE(t[0].quoted);
  EXPECT_EQ(t[1].name, "bar");
  EXPECT_FALSE(t[1].value.has_value());
}

TEST(CmdlineTokenize, K1EqualsForms) {
  auto t = tokenize_cmdline("foo= bar a=b= foo=bar=baz");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(*t[0].value, "");
  EXPECT_EQ(t[1].name, "bar");
  EXPECT_FALSE(t[1].value);
  EXPECT_EQ(t[2].name, "a");
  EXPECT_EQ(*t[2].value, "b=");
  EXPECT_EQ(*t[3].value, "bar=baz");
}

TEST(CmdlineTokenize, K1DashUnderscoreInNamesOnly) {
  auto t = tokenize_cmdline("foo_bar-tee=a-b_c");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "foo_bar-tee");
  EXPECT_EQ(t[0].normalized, "foo_bar_tee");
  EXPECT_EQ(*t[0].value, "a-b_c");
  EXPECT_EQ(t[0].canonical(), "foo_bar_tee=a-b_c");
}

TEST(CmdlineTokenize, K1QuotePlacements) {
  auto t = tokenize_cmdline(R"("foo=bar" foo="bar")");
  ASSERT_EQ(t.size(), 2u);
  for (const auto& x : t) {
    EXPECT_EQ(x.name, "foo");
    EXPECT_EQ(*x.value, "bar");
    EXPECT_TRUE(x.quoted);
  }
  EXPECT_EQ(t[0].raw, R"("foo=bar")");
}

TEST(CmdlineTokenize, K1UnbalancedQuoteDoesNotFail) {
  auto t = tokenize_cmdline(R"(foo="1$2)");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(*t[0].value, "1$2");
  // The open quote swallows the rest of the line, as in the kernel.
  auto u = tokenize_cmdline(R"(foo="1$2 bar=3)");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(*u[0].value, "1$2 bar=3");
}

TEST(CmdlineTokenize, K1RepeatedKeptInOrder) {
  auto t = tokenize_cmdline("console=ttyS0 console=tty0");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(*t[0].value, "ttyS0");
  EXPECT_EQ(*t[1].value, "tty0");
}

TEST(CmdlineTokenize, LeadingEqualsIsNotAValue) {
  // next_arg(): a '=' at index 0 leaves `equals` 0, so the token has no value.
  auto t = tokenize_cmdline("=foo =a=b");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "=foo");
  EXPECT_FALSE(t[0].value);
  EXPECT_EQ(t[1].name, "=a");
  EXPECT_EQ(*t[1].value, "b");
}

TEST(CmdlineTokenize, DoubleDashMarksInitArguments) {
  auto t = tokenize_cmdline("quiet -- single x=1");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FALSE(t[0].after_dashes);
  EXPECT_TRUE(t[1].after_dashes);
  EXPECT_TRUE(t[2].after_dashes);
}

TEST(CmdlineTokenize, TabsAndNewlineAreSpaces) {
  auto t = tokenize_cmdline("a=1\tb=2\n");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(*t[1].value, "2");
  EXPECT_TRUE(tokenize_cmdline("   ").empty());
  EXPECT_TRUE(tokenize_cmdline("").empty());
}

TEST(CmdlineTokenize, LongLineWorks) {
  std::string line;
  while (line.size() < 10000) line += "nosoftlockup ";
  auto t = tokenize_cmdline(line);
  EXPECT_EQ(t.size(), line.size() / 13);
}

TEST(CmdlineTokenize, BinaryJunkIsAClearError) {
  const std::string junk("isolcpus=1\x01\x02\xff", 13);
  try {
    tokenize_cmdline(junk);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0x01 at offset 10"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tokenize_cmdline(std::string("a\0b", 3)), Error);
  EXPECT_THROW(tokenize_cmdline(std::string(kMaxCmdlineBytes + 1, 'a')), Error);
}

}  // namespace
}  // namespace isolab
