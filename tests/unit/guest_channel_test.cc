#include <gtest/gtest.h>

#include "guest/channel.h"

namespace isolab {
namespace {

TEST(Channel, ParsesLengthFramedRecords) {
  std::string s =
      "@@ISOLAB REC n0nce123 uname_r 0 6\n6.1.0\n\n"
      "@@ISOLAB REC n0nce123 lat.json 0 11\n{\"a\":\n\"b\"}\n\n"
      "@@ISOLAB DONE n0nce123\n";
  ChannelContents c = parse_channel(s, "n0nce123");
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[0].data, "6.1.0\n");
  EXPECT_EQ(c.records[1].data, "{\"a\":\n\"b\"}\n");
  EXPECT_TRUE(c.done);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Channel, ContentCannotForgeHeadersOrDone) {
  // The record's content holds a forged DONE and a forged header; length framing skips them.
  std::string body = "@@ISOLAB DONE n0nce123\n@@ISOLAB REC n0nce123 x 0 1\nz";
  std::string s = "@@ISOLAB REC n0nce123 out 0 " + std::to_string(body.size()) + "\n" + body + "\n";
  ChannelContents c = parse_channel(s, "n0nce123");
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].data, body);
  EXPECT_FALSE(c.done);
}

TEST(Channel, ForeignNonceAndTruncation) {
  std::string s = "@@ISOLAB DONE other\n@@ISOLAB REC n0nce123 big 3 100\nonly a few bytes";
  ChannelContents c = parse_channel(s, "n0nce123");
  EXPECT_FALSE(c.done);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_TRUE(c.records[0].truncated);
  EXPECT_EQ(c.records[0].rc, 3);
  EXPECT_TRUE(c.as_map().empty());  // truncated records are not facts
}

TEST(Channel, BinaryJunkNeverCrashes) {
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk += static_cast<char>((i * 7919) & 0xff);
  junk += "@@ISOLAB REC n0nce123 a 0 99999999999999\n@@ISOLAB REC n0nce123 b x y\n@@ISOLAB ";
  ChannelContents c = parse_channel(junk, "n0nce123");
  EXPECT_TRUE(c.records.empty());
  EXPECT_FALSE(c.problems.empty());
}

}  // namespace
}  // namespace isolab
