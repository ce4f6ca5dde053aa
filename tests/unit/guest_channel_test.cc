#include <gtest/gtest.h>

#include "guest/channel.h"
#include "guest/plan.h"

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

TEST(Plan, InitSendsFactsRunsStepsAndPowersOff) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.vcpus = 8;
  p.expect_isolated = "5-7";
  p.expect_nohz_full = "5-7";
  p.busy_cpus = "5-7";
  p.steps.push_back({"lat", "cyclictest -q", {{"json", "cyclictest.json"}}, 40, "5-7"});
  auto files = render_plan_files(p);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "/init");
  const std::string& init = files[0].second;
  EXPECT_NE(init.find("NONCE=abcdef123456"), std::string::npos);
  EXPECT_NE(init.find("rec uname_r"), std::string::npos);
  EXPECT_NE(init.find("timeout -s KILL 40 sh /isolab/steps/lat.sh"), std::string::npos);
  EXPECT_NE(init.find("rec lat.json $rc cyclictest.json"), std::string::npos);
  EXPECT_NE(init.find("poweroff -f"), std::string::npos);
  EXPECT_NE(init.find("expected '5-7'"), std::string::npos);
  EXPECT_EQ(files[1].first, "/isolab/steps/lat.sh");
}

TEST(Plan, RejectsUnsafeNames) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.steps.push_back({"a;reboot", "true", {}, 10, ""});
  EXPECT_THROW(render_plan_files(p), std::exception);
  GuestPlan q;
  q.nonce = "abc def 1234";
  EXPECT_THROW(render_plan_files(q), std::exception);
}

TEST(Plan, SysctlsAreWrittenAndReadBackBeforeTheSteps) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.sysctls = {{"vm.numa_stat", "0"}, {"net.core.x-y", "1 2"}};
  p.steps.push_back({"pf", "page-fault-bench", {}, 30, ""});
  std::string init = render_plan_files(p)[0].second;
  auto w = init.find("echo '0' > /proc/sys/vm/numa_stat; w=$?");
  ASSERT_NE(w, std::string::npos) << init;
  EXPECT_NE(init.find("echo '1 2' > /proc/sys/net/core/x-y; w=$?"), std::string::npos);
  EXPECT_NE(init.find("printf '%s\\t%s\\t%s\\n' vm.numa_stat $w \"$(cat /proc/sys/vm/numa_stat"),
            std::string::npos);
  auto rec = init.find("rec sysctls 0 /tmp/sysctls");
  EXPECT_LT(w, rec);
  EXPECT_LT(rec, init.find("sh /isolab/steps/pf.sh"));
  EXPECT_NE(init.find("fact node_online /sys/devices/system/node/online"), std::string::npos);
  p.sysctls = {{"vm.numa_stat", "0; reboot"}};
  EXPECT_THROW(render_plan_files(p), std::exception);
  p.sysctls = {{"../x", "0"}};
  EXPECT_THROW(render_plan_files(p), std::exception);
}

// A traced step arms the lock contention trigger once, before the steps, sends what
// the trigger file says, and sends the contention lines of every CPU; an untraced plan does not.
TEST(Plan, LockContentionIsArmedOnceAndSentPerTracedStep) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.steps.push_back({"a", "true", {}, 10, "2-3"});
  p.steps.push_back({"b", "true", {}, 10, "2-3"});
  const std::string init = render_plan_files(p)[0].second;
  const std::string arm_cmd = "echo 'stacktrace if flags == 1 || flags == 8' > $L/trigger";
  const auto arm = init.find(arm_cmd);
  ASSERT_NE(arm, std::string::npos) << init;
  EXPECT_EQ(init.find(arm_cmd, arm + 1), std::string::npos);  // once
  EXPECT_LT(init.find("echo 'flags == 1 || flags == 8' > $L/filter"), arm);
  EXPECT_LT(init.find("if [ \"$(cat $L/enable 2>/dev/null)\" = 1 ]; then"), arm);
  EXPECT_LT(arm, init.find("fact lock_contention_trigger $L/trigger"));
  EXPECT_LT(init.find("fact lock_contention_trigger"), init.find("sh /isolab/steps/a.sh"));
  for (const char* st : {"a", "b"})
    EXPECT_NE(init.find(std::string("rec ") + st + ".lock_contention 0 " + st + ".lock_contention"),
              std::string::npos)
        << st;
  EXPECT_NE(init.find("for d in $T/per_cpu/cpu*; do echo \"# cpu ${d##*/cpu}\"; cat $d/trace; done "
                      "2>/dev/null | awk '"),
            std::string::npos);
  EXPECT_NE(trace_event_boot_param().find("lock:contention_begin,lock:contention_end,"),
            std::string::npos);

  GuestPlan q;
  q.nonce = "abcdef123456";
  q.steps.push_back({"a", "true", {}, 10, ""});
  const std::string untraced = render_plan_files(q)[0].second;
  EXPECT_EQ(untraced.find("contention"), std::string::npos);
}

TEST(Plan, ShQuote) { EXPECT_EQ(sh_quote("it's"), "'it'\\''s'"); }

}  // namespace
}  // namespace isolab
