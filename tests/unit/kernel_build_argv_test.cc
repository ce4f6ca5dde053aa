#include <gtest/gtest.h>

#include "base/error.h"
#include "kernel/build_argv.h"

using namespace isolab;
using V = std::vector<std::string>;

namespace {

const std::string kKey = "3fa2c0d1e9b4aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55";

TEST(KernelArgv, ConfigSteps) {
  EXPECT_EQ(make_base_config_argv("/c/build/s1", "tinyconfig", false),
            (V{"make", "O=/c/build/s1", "tinyconfig"}));
  EXPECT_EQ(make_base_config_argv("/c/build/s1", "tinyconfig", true),
            (V{"make", "O=/c/build/s1", "CC=ccache gcc", "tinyconfig"}));
  EXPECT_EQ(merge_config_argv("/c/wt/s1", "/c/build/s1", {"/k/base.config", "/k/iso.config"}),
            (V{"/c/wt/s1/scripts/kconfig/merge_config.sh", "-m", "-O", "/c/build/s1",
               "/c/build/s1/.config", "/k/base.config", "/k/iso.config"}));
  EXPECT_EQ(make_olddefconfig_argv("/c/build/s1", false),
            (V{"make", "O=/c/build/s1", "olddefconfig"}));
}

TEST(KernelArgv, BuildAndRelease) {
  EXPECT_EQ(make_build_argv("/c/build/s1", 2, kKey, false),
            (V{"make", "O=/c/build/s1", "-j2", "LOCALVERSION=-isolab-3fa2c0d1e9b4", "bzImage"}));
  EXPECT_EQ(make_build_argv("/c/build/s1", 8, kKey, true),
            (V{"make", "O=/c/build/s1", "-j8", "LOCALVERSION=-isolab-3fa2c0d1e9b4", "CC=ccache gcc",
               "bzImage"}));
  EXPECT_EQ(make_build_argv("/b", 0, kKey, false)[2], "-j1");
  EXPECT_EQ(
      make_kernelrelease_argv("/c/build/s1", kKey, false),
      (V{"make", "-s", "O=/c/build/s1", "LOCALVERSION=-isolab-3fa2c0d1e9b4", "kernelrelease"}));
  EXPECT_THROW(localversion_for_key("abc"), Error);
  EXPECT_EQ(bzimage_in_build_dir("/b", "x86_64"), "/b/arch/x86/boot/bzImage");
  EXPECT_THROW(bzimage_in_build_dir("/b", "aarch64"), Error);
}

BuildKeyInputs base_inputs() {
  return {"4b825dc642cb6eb9a060e54bf8d69288fbee4904",
          {"aa", "bb"},
          "CONFIG_SMP=y\n# CONFIG_VT is not set\n",
          "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
          "x86_64",
          "bzImage"};
}

TEST(KernelBuildKey, StableForSameInputs) {
  EXPECT_EQ(compute_build_key(base_inputs()), compute_build_key(base_inputs()));
  EXPECT_EQ(compute_build_key(base_inputs()).size(), 64u);
}

TEST(KernelBuildKey, ChangesWithEveryInput) {
  const std::string k0 = compute_build_key(base_inputs());
  std::vector<BuildKeyInputs> changed(8, base_inputs());
  changed[0].source_tree_id[0] = '5';
  changed[1].patch_sha256 = {"bb", "aa"};  // order matters
  changed[2].patch_sha256 = {"aa"};
  changed[3].final_config += "CONFIG_NR_CPUS=8\n";
  changed[4].compiler_version = "gcc (Debian 12.2.0-14) 12.2.0";
  changed[5].arch = "i386";
  changed[6].target = "vmlinux";
  changed[7].patch_sha256 = {"aa", "bb", ""};
  for (std::size_t i = 0; i < changed.size(); ++i)
    EXPECT_NE(compute_build_key(changed[i]), k0) << "input " << i;
}

TEST(KernelBuildKey, FieldsCannotBleedIntoEachOther) {
  BuildKeyInputs a = base_inputs(), b = base_inputs();
  a.patch_sha256 = {"aabb"};
  b.patch_sha256 = {"aa", "bb"};
  EXPECT_NE(compute_build_key(a), compute_build_key(b));
}

}  // namespace
