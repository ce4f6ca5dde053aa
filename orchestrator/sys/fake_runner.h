// A scripted ProcessRunner for unit tests: records every argv and answers from a queue of
// canned results (or a responder function). Never starts a process.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "sys/process.h"

namespace isolab {

class FakeRunner : public ProcessRunner {
 public:
  std::vector<ProcessSpec> calls;
  // If set, called for each run() to produce the result; otherwise results are popped from
  // `queued` (a default success when empty).
  std::function<ProcessResult(const ProcessSpec&)> responder;
  std::deque<ProcessResult> queued;

  ProcessResult run(const ProcessSpec& spec) override {
    calls.push_back(spec);
    if (responder) return responder(spec);
    if (queued.empty()) {
      ProcessResult r;
      r.exit_code = 0;
      return r;
    }
    ProcessResult r = queued.front();
    queued.pop_front();
    return r;
  }
  std::unique_ptr<Process> start(const ProcessSpec& spec) override;
};

}  // namespace isolab
