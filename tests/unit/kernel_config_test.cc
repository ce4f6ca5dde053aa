#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "kernel/config_check.h"

using namespace isolab;

namespace {

const std::string kData = std::string(ISOLAB_TEST_DATA_DIR) + "/kernel/config/";

ConfigFragment frag(const std::string& name) {
  return {"kernel-configs/" + name, read_file(kData + name)};
}

TEST(KernelConfigParse, AssignmentsAndNotSet) {
  auto a = parse_kconfig_text(read_file(kData + "isolation.config"), "isolation.config");
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].name, "CONFIG_NO_HZ_FULL");
  EXPECT_EQ(a[0].value, "y");
  EXPECT_EQ(a[0].line, 2);
  EXPECT_EQ(a[3].name, "CONFIG_VT");
  EXPECT_EQ(a[3].value, "n");
  EXPECT_EQ(a[5].value, "\"console=ttyS0\"");  // strings keep their quotes
}

TEST(KernelConfigParse, JunkLineNamesOriginAndLine) {
  try {
    parse_kconfig_text("CONFIG_A=y\n\nNO_HZ_FULL=y\n", "kernel-configs/bad.config");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "kernel-configs/bad.config:3: not a Kconfig assignment: 'NO_HZ_FULL=y'");
  }
}

TEST(KernelConfigParse, CommentsThatAreNotNotSetAreIgnored) {
  auto a = parse_kconfig_text("# CONFIG_X is set\n#\n# CONFIG_Y is not set\n", "f");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].name, "CONFIG_Y");
}

TEST(KernelConfigSurvival, DroppedAndChangedOptionsNameThemselves) {
  auto bad =
      check_config_survival({frag("isolation.config")}, read_file(kData + "final-dropped.config"));
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_EQ(bad[0].message(),
            "kernel-configs/isolation.config: CONFIG_NO_HZ_FULL=y was dropped by olddefconfig "
            "(final: is not set); check its dependencies");
  EXPECT_EQ(bad[1].name, "CONFIG_RCU_NOCB_CPU");
  EXPECT_FALSE(bad[1].final_value.has_value());
  EXPECT_EQ(bad[1].message(),
            "kernel-configs/isolation.config: CONFIG_RCU_NOCB_CPU=y was dropped by olddefconfig "
            "(final: absent); check its dependencies");
  EXPECT_EQ(bad[2].message(),
            "kernel-configs/isolation.config: CONFIG_NR_CPUS=16 was changed by olddefconfig "
            "(final: CONFIG_NR_CPUS=8); check its dependencies");
  EXPECT_EQ(bad[2].line, 4);
}

TEST(KernelConfigSurvival, LaterFragmentWins) {
  // override.config sets NR_CPUS=8 after isolation.config's 16: 8 is what must survive.
  auto bad = check_config_survival({frag("isolation.config"), frag("override.config")},
                                   read_file(kData + "final-ok.config"));
  EXPECT_TRUE(bad.empty()) << bad.front().message();
  auto bad2 = check_config_survival({frag("isolation.config"), frag("override.config")},
                                    read_file(kData + "final-dropped.config"));
  ASSERT_EQ(bad2.size(), 2u);  // NO_HZ_FULL and RCU_NOCB_CPU; NR_CPUS=8 is right
  EXPECT_EQ(bad2[0].name, "CONFIG_NO_HZ_FULL");
  EXPECT_EQ(bad2[1].name, "CONFIG_RCU_NOCB_CPU");
}

TEST(KernelConfigSurvival, NotSetMatchesAbsentButNotYes) {
  EXPECT_TRUE(
      check_config_survival({{"f", "# CONFIG_RD_XZ is not set\n"}}, "CONFIG_A=y\n").empty());
  auto bad = check_config_survival({{"f", "# CONFIG_VT is not set\n"}}, "CONFIG_VT=y\n");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].message(),
            "f: # CONFIG_VT is not set was changed by olddefconfig (final: CONFIG_VT=y); check its "
            "dependencies");
}

}  // namespace
