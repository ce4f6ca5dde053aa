// process tier: the guest's /init and step scripts, rendered for every example spec and every
// spec of tests/data/specs as a cell would render them (pipeline/cell.h cell_guest_plan,
// guest/init_script.h), pass `busybox sh -n` with the busybox the guest image is built from
// (guest/initramfs.h BaseImageInputs::busybox, busybox-static), with tracing on and off. The
// golden plans' /init of unit_guest_init_script_test are checked too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "base/files.h"
#include "guest/init_script.h"
#include "guest/initramfs.h"
#include "pipeline/cell.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

class InitScriptSyntax : public ::testing::Test {
 protected:
  InitScriptSyntax()
      : runner_(make_real_runner()),
        dir_(fs::temp_directory_path() / ("isolab-sh-n-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~InitScriptSyntax() override { fs::remove_all(dir_); }

  // `busybox sh -n` on the script; "" when it parses, else what busybox said.
  std::string syntax_error(const std::string& script) {
    const fs::path f = dir_ / "script.sh";
    write_file_atomic(f, script);
    ProcessSpec s;
    s.argv = {BaseImageInputs{}.busybox.string(), "sh", "-n", f.string()};
    s.timeout = std::chrono::seconds(30);
    const ProcessResult r = runner_->run(s);
    return r.ok() ? "" : r.describe() + ": " + r.out + r.err;
  }

  // Every file a cell of each variant of the spec renders, with tracing on and off.
  void check_spec(const fs::path& path) {
    SCOPED_TRACE(path.string());
    const Spec spec = load_spec_file(path);
    const GuestDerivation guest = derive_guest(spec);
    const AccelChoice accel;
    for (bool trace : {true, false}) {
      RunOptions opt;
      opt.trace = trace;
      const CellContext cx{spec, opt, accel, guest, dir_ / "base.cpio", dir_};
      for (const VariantSpec& v : spec.variants)
        for (const auto& [name, text] :
             render_plan_files(cell_guest_plan(cx, v, "SyntaxCheckNonce0"))) {
          EXPECT_EQ(syntax_error(text), "") << v.name << " " << name << " trace " << trace;
          ++checked_;
        }
    }
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_;
  int checked_ = 0;
};

TEST_F(InitScriptSyntax, BusyboxIsTheGuestImages) {
  ASSERT_TRUE(fs::exists(BaseImageInputs{}.busybox))
      << BaseImageInputs{}.busybox << " is missing: busybox-static (scripts/setup.sh)";
  EXPECT_EQ(syntax_error("if true; then echo ok; fi\n"), "");
  EXPECT_NE(syntax_error("if true; then echo broken\n"), "");  // sh -n does catch errors
}

TEST_F(InitScriptSyntax, EveryExampleSpecsInitAndStepsParse) {
  int specs = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ISOLAB_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".json") {
      check_spec(e.path());
      ++specs;
    }
  EXPECT_GE(specs, 4);
  EXPECT_GT(checked_, specs * 2);
}

TEST_F(InitScriptSyntax, EveryTestSpecsInitAndStepsParse) {
  for (const auto& e : fs::directory_iterator(fs::path(ISOLAB_TEST_DATA_DIR) / "specs"))
    if (e.path().extension() == ".json") check_spec(e.path());
  EXPECT_GT(checked_, 0);
}

TEST_F(InitScriptSyntax, GoldenInitsParse) {
  for (const char* golden : {"init-full-plan.sh", "init-minimal-plan.sh"})
    EXPECT_EQ(syntax_error(read_file(fs::path(ISOLAB_TEST_DATA_DIR) / "guest" / golden)), "")
        << golden;
}

}  // namespace
}  // namespace isolab
