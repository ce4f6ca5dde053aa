// A minimal QMP client (QEMU Machine Protocol over a unix socket) and the host CPU pinning of a
// QEMU process's threads. Our own code: QMP is one JSON object per line (QEMU
// docs/interop/qmp-spec.rst): a greeting {"QMP": ...}, then {"execute": cmd, "arguments": {}}
// answered by {"return": ...} or {"error": {"class", "desc"}}, with asynchronous {"event": ...}
// lines in between.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "vm/vm.h"

namespace isolab {

class QmpClient {
 public:
  // Connects to the QMP socket at `path`, retrying every 20 ms for up to `timeout` while
  // still_running() says QEMU lives, reads the greeting and negotiates capabilities
  // (qmp_capabilities). Throws isolab::Error "QMP <path>: ..." on timeout, a dead QEMU or a
  // malformed greeting.
  static std::unique_ptr<QmpClient> connect(const std::filesystem::path& path,
                                            std::chrono::milliseconds timeout,
                                            const std::function<bool()>& still_running);
  ~QmpClient();
  QmpClient(const QmpClient&) = delete;
  QmpClient& operator=(const QmpClient&) = delete;

  // Sends the command and returns its "return" value, skipping events. Throws isolab::Error
  // "QMP <cmd>: <class>: <desc>" for an error reply, or on EOF / no reply within `timeout`.
  nlohmann::json execute(const std::string& command,
                         const nlohmann::json& arguments = nlohmann::json(),
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  explicit QmpClient(int fd) : fd_(fd) {}
  nlohmann::json read_message(std::chrono::milliseconds timeout, const std::string& what);
  int fd_;
  std::string buf_;
};

// The vCPU threads from a query-cpus-fast reply ([{"cpu-index": 0, "thread-id": 1234, ...}]):
// (cpu-index, thread-id) pairs sorted by cpu-index. Throws isolab::Error quoting the reply when
// an entry lacks either field.
std::vector<std::pair<int, int>> qmp_vcpu_threads(const nlohmann::json& query_cpus_fast);

// Cpus_allowed_list of /proc/<pid>/task/<tid>/status ("" when the thread or the line is gone).
std::string read_cpus_allowed_list(int pid, int tid);

// Pins QEMU process `pid`: every thread in /proc/<pid>/task to cfg.emulator_pin, then each vCPU
// thread (vcpu_threads: cpu-index, thread-id) to cfg.vcpu_pin[cpu-index], with
// sched_setaffinity(2); returns each thread's affinity read back. Throws isolab::Error naming
// the thread and the CPU list when sched_setaffinity fails (e.g. a CPU that is offline).
std::vector<ThreadAffinity> pin_qemu_threads(int pid,
                                             const std::vector<std::pair<int, int>>& vcpu_threads,
                                             const VmConfig& cfg);

}  // namespace isolab
