#include "vm/qmp.h"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "cmdline/cpulist.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

int connect_unix(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof addr.sun_path)
    throw Error("QMP " + path.string() + ": socket path longer than " +
                std::to_string(sizeof addr.sun_path - 1) + " bytes");
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error("QMP: socket: " + std::string(std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  ::close(fd);
  return -1;
}

}  // namespace

std::unique_ptr<QmpClient> QmpClient::connect(const fs::path& path,
                                              std::chrono::milliseconds timeout,
                                              const std::function<bool()>& still_running) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int fd = connect_unix(path);
    if (fd >= 0) {
      std::unique_ptr<QmpClient> c(new QmpClient(fd));
      json greeting = c->read_message(std::chrono::seconds(10), "greeting");
      if (!greeting.contains("QMP"))
        throw Error("QMP " + path.string() + ": unexpected greeting " + greeting.dump());
      c->execute("qmp_capabilities");
      return c;
    }
    if (!still_running()) throw Error("QMP " + path.string() + ": QEMU exited before it listened");
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("QMP " + path.string() + ": no listener after " +
                  std::to_string(timeout.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

QmpClient::~QmpClient() { ::close(fd_); }

json QmpClient::read_message(std::chrono::milliseconds timeout, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buf_.find('\n'); nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
      try {
        return json::parse(line);
      } catch (const json::parse_error&) {
        throw Error("QMP " + what + ": not JSON: " + sanitize_excerpt(line, 200));
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw Error("QMP " + what + ": no reply");
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[4096];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("QMP " + what + ": connection closed");
    buf_.append(chunk, static_cast<std::size_t>(n));
    if (buf_.size() > (16u << 20)) throw Error("QMP " + what + ": reply larger than 16 MiB");
  }
}

json QmpClient::execute(const std::string& command, const json& arguments,
                        std::chrono::milliseconds timeout) {
  json req = {{"execute", command}};
  if (!arguments.is_null()) req["arguments"] = arguments;
  const std::string line = req.dump() + "\n";
  for (std::size_t off = 0; off < line.size();) {
    ssize_t n = ::send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("QMP " + command + ": send: " + std::strerror(errno));
    off += static_cast<std::size_t>(n);
  }
  for (;;) {
    json m = read_message(timeout, command);
    if (m.contains("event")) continue;
    if (m.contains("error")) {
      const json& e = m["error"];
      throw Error("QMP " + command + ": " + e.value("class", std::string("?")) + ": " +
                  e.value("desc", std::string("?")));
    }
    if (m.contains("return")) return m["return"];
  }
}

std::vector<std::pair<int, int>> qmp_vcpu_threads(const json& reply) {
  std::vector<std::pair<int, int>> out;
  if (!reply.is_array()) throw Error("QMP query-cpus-fast: expected an array: " + reply.dump());
  for (const json& c : reply) {
    if (!c.is_object() || !c.contains("cpu-index") || !c.contains("thread-id") ||
        !c["cpu-index"].is_number_integer() || !c["thread-id"].is_number_integer())
      throw Error("QMP query-cpus-fast: entry without cpu-index/thread-id: " + c.dump());
    out.emplace_back(c["cpu-index"].get<int>(), c["thread-id"].get<int>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_cpus_allowed_list(int pid, int tid) {
  std::string status;
  try {
    status = read_file(
        fs::path("/proc") / std::to_string(pid) / "task" / std::to_string(tid) / "status", 1 << 16);
  } catch (const Error&) {
    return "";
  }
  const std::string key = "\nCpus_allowed_list:";
  auto at = status.find(key);
  if (at == std::string::npos) return "";
  auto b = status.find_first_not_of(" \t", at + key.size());
  auto e = status.find('\n', b);
  return status.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

namespace {

void set_affinity(int tid, const std::string& list, const std::string& who) {
  const CpuSet set = parse_cpulist(list, kMaxCpus);
  const unsigned n = set.last() ? *set.last() + 1 : 1;
  cpu_set_t* mask = CPU_ALLOC(n);
  const std::size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, mask);
  for (unsigned c : set.cpus()) CPU_SET_S(c, size, mask);
  int rc = ::sched_setaffinity(tid, size, mask);
  int err = errno;
  CPU_FREE(mask);
  if (rc != 0)
    throw Error("pinning " + who + " (thread " + std::to_string(tid) + ") to CPUs " + list +
                ": sched_setaffinity: " + std::strerror(err));
}

}  // namespace

std::vector<ThreadAffinity> pin_qemu_threads(int pid,
                                             const std::vector<std::pair<int, int>>& vcpu_threads,
                                             const VmConfig& cfg) {
  std::vector<ThreadAffinity> out;
  std::vector<int> tids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec))
    tids.push_back(std::atoi(e.path().filename().c_str()));
  if (ec) throw Error("pinning QEMU " + std::to_string(pid) + ": /proc task list: " + ec.message());
  std::sort(tids.begin(), tids.end());
  auto vcpu_of = [&](int tid) {
    for (const auto& [index, t] : vcpu_threads)
      if (t == tid) return index;
    return -1;
  };
  // Every thread to the emulator CPUs first: threads QEMU starts later inherit the main
  // thread's affinity.
  for (int tid : tids)
    if (vcpu_of(tid) < 0) set_affinity(tid, cfg.emulator_pin, "QEMU thread");
  for (const auto& [index, tid] : vcpu_threads) {
    if (index < 0 || index >= static_cast<int>(cfg.vcpu_pin.size()))
      throw Error("pinning: QMP reports vCPU " + std::to_string(index) + " of a " +
                  std::to_string(cfg.vcpu_pin.size()) + "-vCPU guest");
    set_affinity(tid, cfg.vcpu_pin[index], "vCPU " + std::to_string(index));
  }
  for (int tid : tids) {
    ThreadAffinity a;
    a.tid = tid;
    a.vcpu = vcpu_of(tid);
    a.role = a.vcpu >= 0 ? "vcpu" : "emulator";
    a.planned = a.vcpu >= 0 ? cfg.vcpu_pin[a.vcpu] : cfg.emulator_pin;
    a.applied = read_cpus_allowed_list(pid, tid);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace isolab
