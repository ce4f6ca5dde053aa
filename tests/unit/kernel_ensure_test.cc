// ensure_kernel against a FakeRunner that plays tar, git, gcc and make (creating the files
// they would create): the exact argv sequence, cache hits, and error messages.
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "kernel/build_argv.h"
#include "kernel/kernel.h"
#include "sys/fake_runner.h"

namespace fs = std::filesystem;
using namespace isolab;
using V = std::vector<std::string>;

namespace {

const std::string kGcc = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
const std::string kFinalOk =
    "CONFIG_SMP=y\nCONFIG_NO_HZ_FULL=y\n# CONFIG_LOCALVERSION_AUTO is not set\n"
    "CONFIG_LOCALVERSION=\"\"\n";

std::string arg_value(const V& argv, const std::string& prefix) {
  for (const auto& a : argv)
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  return "";
}

class KernelEnsure : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("isolab-kernel-ensure-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    tarball_ = dir_ / "linux-6.1.tar.xz";
    write_file_atomic(tarball_, "not really a tarball");
    fragment_ = dir_ / "isolation.config";
    write_file_atomic(fragment_, "CONFIG_SMP=y\nCONFIG_NO_HZ_FULL=y\n");
    runner_.responder = [this](const ProcessSpec& s) { return respond(s); };
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProcessResult respond(const ProcessSpec& s) {
    ProcessResult r;
    r.exit_code = 0;
    const V& a = s.argv;
    if (a[0] == "gcc") {
      r.out = kGcc + "\nCopyright (C) 2022 Free Software Foundation, Inc.\n";
    } else if (a[0] == "tar") {
      fs::path into = a[4];
      fs::create_directories(into / "scripts/kconfig");
      write_file_atomic(into / "Makefile", "VERSION = 6\n");
      write_file_atomic(into / "scripts/kconfig/merge_config.sh", "#!/bin/sh\n");
    } else if (a[0] == "git") {
      V rest(a.begin() + 3, a.end());
      if (rest[0] == "init") {
        fs::create_directories(fs::path(a[2]) / ".git");
      } else if (rest[0] == "rev-parse") {
        const std::string& rev = rest.back();
        if (rev.find("refs/isolab/variants/") == 0) {
          r.exit_code = 1;
        } else {
          r.out = std::string(40, rev.find("tree") != std::string::npos ? 't' : 'c') + "\n";
        }
      } else if (rest[0] == "worktree" && rest[1] == "add") {
        fs::create_directories(rest[4]);
        write_file_atomic(fs::path(rest[4]) / ".git", "gitdir: x\n");
      }
    } else if (a[0] == "make") {
      fs::path build = arg_value(a, "O=");
      const std::string& target = a.back();
      if (target == "tinyconfig") write_file_atomic(build / ".config", "CONFIG_SMP=y\n");
      if (target == "olddefconfig") write_file_atomic(build / ".config", final_config_);
      if (target == "bzImage") {
        if (!fail_build_log_.empty()) {
          write_file_atomic(s.stdout_path, read_file(s.stdout_path) + fail_build_log_);
          r.exit_code = 2;
        } else {
          write_file_atomic(build / "arch/x86/boot/bzImage", "kernel image bytes");
        }
      }
      if (target == "kernelrelease") r.out = "6.1.192" + arg_value(a, "LOCALVERSION=") + "\n";
    }
    return r;
  }

  KernelRequest request() {
    KernelRequest req;
    req.source.tarball = tarball_;
    req.fragments = {fragment_};
    req.variant_name = "vanilla";
    return req;
  }
  KernelEnv env(bool ccache) {
    KernelEnv e{dir_ / "cache", runner_};
    e.log_dir = dir_ / "logs";
    e.jobs = 2;
    e.use_ccache = ccache;
    return e;
  }
  std::vector<V> calls(const std::string& prog) {
    std::vector<V> out;
    for (const auto& c : runner_.calls)
      if (fs::path(c.argv[0]).filename() == prog) out.push_back(c.argv);
    return out;
  }

  fs::path dir_, tarball_, fragment_;
  FakeRunner runner_;
  std::string final_config_ = kFinalOk;
  std::string fail_build_log_;
};

TEST_F(KernelEnsure, ArgvSequenceThenCacheHit) {
  KernelArtifact a = ensure_kernel(request(), env(true));
  const fs::path cache = dir_ / "cache";
  std::string wt;  // from git -C <repo> worktree add -f --detach <wt> <commit>
  for (const auto& g : calls("git"))
    if (g.size() == 9 && g[3] == "worktree" && g[4] == "add") wt = g[7];
  ASSERT_FALSE(wt.empty());
  const fs::path slot = fs::path(wt).filename();
  const std::string b = (cache / "build" / slot).string();
  const std::string lv = "LOCALVERSION=-isolab-" + a.build_key.substr(0, 12);
  std::vector<V> make_calls = calls("make");
  ASSERT_EQ(make_calls.size(), 4u);
  EXPECT_EQ(make_calls[0], (V{"make", "O=" + b, "CC=ccache gcc", "tinyconfig"}));
  EXPECT_EQ(make_calls[1], (V{"make", "O=" + b, "CC=ccache gcc", "olddefconfig"}));
  EXPECT_EQ(make_calls[2], (V{"make", "O=" + b, "-j2", lv, "CC=ccache gcc", "bzImage"}));
  EXPECT_EQ(make_calls[3], (V{"make", "-s", "O=" + b, lv, "CC=ccache gcc", "kernelrelease"}));
  ASSERT_EQ(calls("merge_config.sh").size(), 1u);
  EXPECT_EQ(calls("merge_config.sh")[0],
            (V{wt + "/scripts/kconfig/merge_config.sh", "-m", "-O", b, b + "/.config",
               fragment_.string(), b + "/isolab-required.config"}));
  // make runs in the worktree.
  for (const auto& c : runner_.calls) {
    if (c.argv[0] == "make") {
      EXPECT_EQ(c.cwd, wt);
    }
  }

  EXPECT_FALSE(a.from_cache);
  EXPECT_EQ(a.kernel_release, "6.1.192-isolab-" + a.build_key.substr(0, 12));
  EXPECT_EQ(a.build_key,
            compute_build_key({std::string(40, 't'), {}, kFinalOk, kGcc, "x86_64", "bzImage"}));
  EXPECT_EQ(a.bzimage, cache / "kernels" / a.build_key / "bzImage");
  EXPECT_EQ(read_file(a.bzimage), "kernel image bytes");
  EXPECT_EQ(read_file(a.config_path), kFinalOk);
  EXPECT_EQ(a.config_sha256, sha256_hex(kFinalOk));
  EXPECT_EQ(a.log, dir_ / "logs/build-vanilla.log");
  EXPECT_TRUE(fs::exists(cache / "kernels" / a.build_key / "build.log"));
  EXPECT_EQ(a.source_tree_id, std::string(40, 't'));

  // Same inputs: only gcc --version runs (no tar, git or make).
  runner_.calls.clear();
  KernelArtifact b2 = ensure_kernel(request(), env(true));
  ASSERT_EQ(runner_.calls.size(), 1u);
  EXPECT_EQ(runner_.calls[0].argv, (V{"gcc", "--version"}));
  EXPECT_TRUE(b2.from_cache);
  EXPECT_EQ(b2.build_key, a.build_key);
  EXPECT_EQ(b2.kernel_release, a.kernel_release);
}

TEST_F(KernelEnsure, NoCcacheMeansNoCcVariable) {
  ensure_kernel(request(), env(false));
  for (const auto& c : calls("make"))
    for (const auto& arg : c) EXPECT_EQ(arg.find("CC="), std::string::npos);
}

TEST_F(KernelEnsure, AnotherFragmentIsAnotherKeyAndBuild) {
  KernelArtifact a = ensure_kernel(request(), env(false));
  final_config_ = kFinalOk + "CONFIG_NR_CPUS=8\n";
  write_file_atomic(fragment_, "CONFIG_SMP=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_NR_CPUS=8\n");
  runner_.calls.clear();
  KernelArtifact b = ensure_kernel(request(), env(false));
  EXPECT_FALSE(b.from_cache);
  EXPECT_NE(b.build_key, a.build_key);
  EXPECT_EQ(calls("make").size(), 4u);
}

// The guest's CPU count becomes a generated NR_CPUS fragment merged after the user's,
// part of the key (through the final .config and the index) but not of the build slot.
TEST_F(KernelEnsure, NrCpusFragmentIsMergedAndKeyedButSharesTheSlot) {
  KernelArtifact a = ensure_kernel(request(), env(false));
  const V first_merge = calls("merge_config.sh").at(0);
  final_config_ = kFinalOk + "CONFIG_NR_CPUS=40\n";
  runner_.calls.clear();
  KernelRequest req = request();
  req.nr_cpus = 40;
  KernelArtifact b = ensure_kernel(req, env(false));
  EXPECT_FALSE(b.from_cache);
  EXPECT_NE(b.build_key, a.build_key);
  ASSERT_EQ(calls("merge_config.sh").size(), 1u);
  const V merge = calls("merge_config.sh")[0];
  const std::string bdir = merge[3];
  EXPECT_EQ(bdir, first_merge[3]);  // same build slot
  EXPECT_EQ(merge, (V{merge[0], "-m", "-O", bdir, bdir + "/.config", fragment_.string(),
                      bdir + "/isolab-nr-cpus.config", bdir + "/isolab-required.config"}));
  EXPECT_EQ(read_file(fs::path(bdir) / "isolab-nr-cpus.config"), nr_cpus_fragment(40));
  // A second request for 40 CPUs is a cache hit; the 16-CPU kernel is still cached as well.
  runner_.calls.clear();
  EXPECT_TRUE(ensure_kernel(req, env(false)).from_cache);
  EXPECT_TRUE(ensure_kernel(request(), env(false)).from_cache);
  // NR_CPUS that olddefconfig does not keep fails the build naming the generated fragment.
  final_config_ = kFinalOk + "CONFIG_NR_CPUS=512\n";
  req.nr_cpus = 600;
  try {
    ensure_kernel(req, env(false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("isolab guest CPU count: CONFIG_NR_CPUS=600 was changed"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(KernelEnsure, DroppedOptionFailsWithFragmentAndName) {
  final_config_ =
      "CONFIG_SMP=y\n# CONFIG_NO_HZ_FULL is not set\n# CONFIG_LOCALVERSION_AUTO is not set\n";
  KernelRequest req = request();
  req.variant_name = "iso";
  try {
    ensure_kernel(req, env(false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "variant iso: config: " + fragment_.string() +
                  ": CONFIG_NO_HZ_FULL=y was dropped by olddefconfig (final: is not set); check "
                  "its dependencies; isolab required options: CONFIG_LOCALVERSION=\"\" was "
                  "dropped by olddefconfig (final: absent); check its dependencies");
  }
  EXPECT_EQ(calls("make").size(), 2u);  // no build after a failed check
}

TEST_F(KernelEnsure, BuildFailureQuotesFirstErrorAndLog) {
  fail_build_log_ =
      "  CC      mm/vmstat.o\n"
      "mm/vmstat.c:1993:17: error: 'foo' undeclared (first use in this function)\n"
      "make[3]: *** [scripts/Makefile.build:250: mm/vmstat.o] Error 1\n";
  KernelRequest req = request();
  req.variant_name = "patched";
  try {
    ensure_kernel(req, env(false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "variant patched: build: make exited 2; first error: mm/vmstat.c:1993:17: error: "
              "'foo' undeclared (first use in this function); log: " +
                  (dir_ / "logs/build-patched.log").string());
  }
  EXPECT_FALSE(fs::exists(dir_ / "cache/kernels"));
}

TEST_F(KernelEnsure, PrebuiltReturnsTheImage) {
  const fs::path img = dir_ / "bzImage";
  write_file_atomic(img, "prebuilt");
  KernelRequest req;
  req.source.kind = KernelSourceSpec::Kind::prebuilt;
  req.source.prebuilt = img;
  req.source.prebuilt_release = "6.1.0-custom";
  KernelArtifact a = ensure_kernel(req, env(false));
  EXPECT_EQ(a.bzimage, img);
  EXPECT_EQ(a.kernel_release, "6.1.0-custom");
  EXPECT_EQ(a.build_key, sha256_hex("prebuilt"));
  EXPECT_TRUE(runner_.calls.empty());
  req.source.prebuilt = dir_ / "missing";
  EXPECT_THROW(ensure_kernel(req, env(false)), Error);
}

TEST_F(KernelEnsure, MissingTarballNamesIt) {
  KernelRequest req = request();
  req.source.tarball = dir_ / "nope.tar.xz";
  try {
    ensure_kernel(req, env(false));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "variant vanilla: source: kernel source tarball " +
                                         (dir_ / "nope.tar.xz").string() + " does not exist");
  }
}

}  // namespace
