#include "sys/fake_runner.h"

#include <memory>

namespace isolab {

namespace {

// A process that has already ended with the runner's canned result.
class FakeProcess : public Process {
 public:
  explicit FakeProcess(ProcessResult r) : r_(std::move(r)) {}
  int pid() const override { return 0; }
  std::optional<ProcessResult> wait_for(std::chrono::milliseconds) override { return r_; }
  ProcessResult terminate(std::chrono::milliseconds) override { return r_; }

 private:
  ProcessResult r_;
};

}  // namespace

std::unique_ptr<Process> FakeRunner::start(const ProcessSpec& spec) {
  return std::make_unique<FakeProcess>(run(spec));
}

}  // namespace isolab
