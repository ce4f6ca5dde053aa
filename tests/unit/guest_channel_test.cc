#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/files.h"
#include "guest/channel.h"
#include "guest/gunzip.h"

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

// The guest's /init sends records of more than 4 KiB compressed by busybox gzip, as
// "<name>.gz": the host gives them back under their own name, byte for byte.
std::string trace_text() {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/trace-vmstat-mlock-vanilla-6.1.txt");
}
std::string trace_gz() {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) +
                   "/guest/trace-vmstat-mlock-vanilla-6.1.txt.gz");
}
std::string record(const std::string& name, const std::string& data) {
  return "@@ISOLAB REC n0nce123 " + name + " 0 " + std::to_string(data.size()) + "\n" + data + "\n";
}

TEST(Channel, CompressedRecordComesBackUnderItsName) {
  const std::string s = record("vmstat-idle.trace.gz", trace_gz()) + "@@ISOLAB DONE n0nce123\n";
  ChannelContents c = parse_channel(s, "n0nce123");
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].name, "vmstat-idle.trace");
  EXPECT_FALSE(c.records[0].truncated);
  EXPECT_EQ(c.records[0].data, trace_text());
  ASSERT_NE(c.find("vmstat-idle.trace"), nullptr);
  EXPECT_TRUE(c.problems.empty());
}

// Guest bytes are untrusted: a stream cut short keeps what decompressed and is truncated; bytes
// that are not gzip are a problem, never a crash.
TEST(Channel, CutOrForgedCompressedRecordIsAProblem) {
  const std::string gz = trace_gz();
  ChannelContents cut =
      parse_channel(record("x.trace.gz", gz.substr(0, gz.size() / 2)), "n0nce123");
  ASSERT_EQ(cut.records.size(), 1u);
  EXPECT_EQ(cut.records[0].name, "x.trace");
  EXPECT_TRUE(cut.records[0].truncated);
  EXPECT_EQ(trace_text().compare(0, cut.records[0].data.size(), cut.records[0].data), 0);
  EXPECT_TRUE(cut.as_map().empty());
  ASSERT_EQ(cut.problems.size(), 1u);
  EXPECT_THAT(cut.problems[0], ::testing::HasSubstr("record x.trace.gz does not decompress"));

  ChannelContents forged = parse_channel(record("y.gz", "plain text, no gzip"), "n0nce123");
  ASSERT_EQ(forged.records.size(), 1u);
  EXPECT_TRUE(forged.records[0].truncated);
  EXPECT_TRUE(forged.records[0].data.empty());
  EXPECT_EQ(forged.problems.size(), 1u);
}

TEST(Gunzip, StopsAtItsBound) {
  const GunzipResult whole = gunzip(trace_gz(), 1u << 20);
  EXPECT_TRUE(whole.complete) << whole.error;
  EXPECT_EQ(whole.data.size(), trace_text().size());
  const GunzipResult bounded = gunzip(trace_gz(), 1000);
  EXPECT_FALSE(bounded.complete);
  EXPECT_EQ(bounded.data.size(), 1000u);
  EXPECT_EQ(bounded.error, "more than 1000 bytes");
}

}  // namespace
}  // namespace isolab
