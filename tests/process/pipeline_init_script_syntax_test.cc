// process tier: the guest's /init and step scripts, rendered for every example spec and every
// spec of tests/data/specs as a cell would render them (pipeline/cell.h cell_guest_plan,
// guest/init_script.h), pass `busybox sh -n` with the busybox the guest image is built from
// (guest/initramfs.h BaseImageInputs::busybox, busybox-static), with tracing on and off. The
// golden plans' /init of unit_guest_init_script_test are checked too, and a traced step's one
// pass over the CPU buffers is run on real guest traces.
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

// A traced step cuts the vmstat_update queue events and the lock contention from every CPU's
// buffer in one pass (a fixed-string prefilter, then awk). Run with the guest's busybox on real
// guest traces, it gives byte for byte what the two passes it replaced gave: a grep for the
// queue events over the whole text, and the lock awk over all of it.
TEST_F(InitScriptSyntax, OnePassTraceCollectionKeepsWhatTwoPassesKept) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.steps.push_back({"s", "true", {}, 10, "2-3"});
  const std::string init = render_plan_files(p)[0].second;
  const auto from = init.find(": > s.vmstat_queue\n");
  ASSERT_NE(from, std::string::npos) << init;
  std::string pass = init.substr(from, init.find('\n', init.find("| awk -v q=", from)) - from);
  const std::string buffers = (dir_ / "trace.").string();
  for (auto at = pass.find("/tmp/trace."); at != std::string::npos;
       at = pass.find("/tmp/trace.", at + buffers.size()))
    pass.replace(at, 11, buffers);

  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  for (const char* applet : {"cat", "grep", "awk"})
    fs::create_symlink(BaseImageInputs{}.busybox, bin / applet);
  int cpu = 0;
  for (const char* f :
       {"guest-6.1-tcg-cpus2-3-lock-stacks.txt", "guest-6.1-tcg-lock-contention-alloc.txt",
        "guest-6.1-tcg-rtla-osnoise-vmstat-queue.txt", "guest-6.1-tcg-cpus5-7.txt"})
    fs::copy_file(fs::path(ISOLAB_TEST_DATA_DIR) / "trace" / f,
                  dir_ / ("trace." + std::to_string(cpu++)));
  const std::string two_passes =
      "cat " + buffers + "* | grep 'workqueue_queue_work:.*function=vmstat_update' > ref.vq\n" +
      "for f in " + buffers + "*; do echo \"# cpu ${f##*/trace.}\"; cat $f; done | awk " +
      "'/^# (cpu |entries-in-buffer)/{print; s=0; next} /^CPU:[0-9]+ \\[LOST /{print; s=0; " +
      "next} /: contention_(begin|end): /{s=($0 ~ /contention_begin/); print; next} /: <stack " +
      "trace>/{if (s) print; next} /^ => /{if (s) print; next} {s=0}' > ref.lc\n";
  ProcessSpec s;
  s.argv = {BaseImageInputs{}.busybox.string(), "sh", "-c", pass + "\n" + two_passes};
  s.cwd = dir_;
  s.env = {{"PATH", bin.string()}};
  s.timeout = std::chrono::seconds(60);
  const ProcessResult r = runner_->run(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.out << r.err << "\n" << pass;
  const std::string queue = read_file(dir_ / "s.vmstat_queue");
  const std::string lock = read_file(dir_ / "s.lock_contention");
  EXPECT_EQ(queue, read_file(dir_ / "ref.vq"));
  EXPECT_EQ(lock, read_file(dir_ / "ref.lc"));
  EXPECT_NE(queue.find("function=vmstat_update"), std::string::npos);  // both kinds were there
  EXPECT_NE(lock.find(" => folio_batch_move_lru"), std::string::npos);
  EXPECT_NE(lock.find("# cpu 3\n"), std::string::npos);
}

}  // namespace
}  // namespace isolab
