// How a mailed series' reading reaches the plan's text and result.json (pipeline/mailed_series.h):
// the record of a series as kernel/mbox_series.h gives it for a thread with a point reroll.
#include <gtest/gtest.h>

#include "pipeline/mailed_series.h"

namespace isolab {
namespace {

MailedSeries xfs_like() {
  MailedSeries s;
  s.mbox = "t.mbox";
  s.version = "v2";
  s.b4 = "b4 0.12.0 am: 2 patch(es)";
  MailedPatch a;
  a.path = "/c/series/ab/0001.patch";
  a.subject = "[PATCH v2.1 1/2] a";
  a.message_id = "<a@x>";
  a.place = "v2.1 1/2";
  a.text_from = "b4 am";
  a.b4 = "took it";
  a.trailers = {"Signed-off-by: A <a@x>", "Reviewed-by: R <r@x>"};
  a.trailers_from_replies = {"Reviewed-by: R <r@x>"};
  a.note = "a point reroll (v2.1) of patch 1";
  MailedPatch b = a;
  b.path = "/c/series/ab/0002.patch";
  b.subject = "[PATCH 2/2] b";
  b.place = "v1 2/2";
  b.text_from = "git mailsplit";
  b.trailers_from_replies = {};
  b.note = "taken from v1: v2 re-sent only 1/2 (a partial reroll)";
  s.patches = {a, b};
  s.left_out = {{"message 1 <o@x> '[PATCH 1/2] a'", "v1 1/2: replaced by v2.1 1/2"}};
  return s;
}

TEST(MailedSeriesRecord, PlanTextListsPatchesTrailersAndEveryMessageLeftOut) {
  Spec spec;
  spec.variants.resize(2);
  spec.variants[0].name = "vanilla";
  spec.variants[1].name = "patched";
  EXPECT_EQ(mailed_series_text(spec), "");
  spec.variants[1].mailed_series.push_back(mailed_series_json(xfs_like()));
  EXPECT_EQ(mailed_series_text(spec),
            "Mailed series (how each mbox was read):\n"
            "  variant patched: t.mbox: 2 patch(es) of v2; b4: b4 0.12.0 am: 2 patch(es)\n"
            "    1. [PATCH v2.1 1/2] a [v2.1 1/2; text from b4 am; b4: took it]\n"
            "       a point reroll (v2.1) of patch 1\n"
            "       trailers from replies: Reviewed-by: R <r@x>\n"
            "       trailers: Signed-off-by: A <a@x>; Reviewed-by: R <r@x>\n"
            "    2. [PATCH 2/2] b [v1 2/2; text from git mailsplit; b4: took it]\n"
            "       taken from v1: v2 re-sent only 1/2 (a partial reroll)\n"
            "       trailers: Signed-off-by: A <a@x>; Reviewed-by: R <r@x>\n"
            "    left out:\n"
            "      message 1 <o@x> '[PATCH 1/2] a': v1 1/2: replaced by v2.1 1/2\n");
}

TEST(MailedSeriesRecord, ResultPatchEntriesCarryToolAndTrailers) {
  VariantSpec v;
  v.mailed_series.push_back(mailed_series_json(xfs_like()));
  const nlohmann::json e =
      with_mail_facts(v, "/c/series/ab/0001.patch", {{"path", "/c/series/ab/0001.patch"}});
  EXPECT_EQ(e["tool"], "b4 am");
  EXPECT_EQ(e["trailers_from_replies"], nlohmann::json::array({"Reviewed-by: R <r@x>"}));
  EXPECT_EQ(e["message_id"], "<a@x>");
  // A patch no mbox wrote (a directory's file) is recorded as before.
  const nlohmann::json plain = with_mail_facts(v, "patches/x/0001.patch", {{"path", "p"}});
  EXPECT_EQ(plain, (nlohmann::json{{"path", "p"}}));
  const nlohmann::json r = v.mailed_series[0];
  EXPECT_EQ(r["patches"][1]["number"], 2);
  EXPECT_EQ(r["left_out"][0]["why"], "v1 1/2: replaced by v2.1 1/2");
}

}  // namespace
}  // namespace isolab
