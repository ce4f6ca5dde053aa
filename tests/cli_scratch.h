// A process test of the isolab executable: a scratch directory of its own (removed after the
// test) and `isolab ARGS...` run as a child process (ISOLAB_BINARY, 120 s timeout).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sys/process.h"

namespace isolab {

class CliScratchTest : public ::testing::Test {
 protected:
  // name: the scratch directory is <temp>/isolab-<name>-<pid>.
  explicit CliScratchTest(std::string name) : name_(std::move(name)) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("isolab-" + name_ + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    runner_ = make_real_runner();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // isolab with args; its exit status, stdout and stderr.
  ProcessResult isolab(std::vector<std::string> args) {
    ProcessSpec ps;
    ps.argv = {ISOLAB_BINARY};
    ps.argv.insert(ps.argv.end(), args.begin(), args.end());
    ps.timeout = std::chrono::seconds(120);
    return runner_->run(ps);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ProcessRunner> runner_;

 private:
  std::string name_;
};

}  // namespace isolab
