#include "sys/proc_io.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace isolab {

namespace {

constexpr std::size_t kMaxProcesses = 256;

ProcIo read_io(int pid) {
  ProcIo io;
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") io.rchar = value;
    if (key == "wchar:") io.wchar = value;
  }
  return io;
}

// The children of every thread of pid.
std::vector<int> children_of(int pid) {
  std::vector<int> out;
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(t.path() / "children");
    int child = 0;
    while (in >> child) out.push_back(child);
  }
  return out;
}

}  // namespace

ProcIo process_io(int pid) { return read_io(pid); }

ProcIo process_tree_io(int pid) {
  ProcIo sum;
  std::vector<int> todo = {pid};
  for (std::size_t seen = 0; !todo.empty() && seen < kMaxProcesses; ++seen) {
    const int p = todo.back();
    todo.pop_back();
    const ProcIo io = read_io(p);
    sum.rchar += io.rchar;
    sum.wchar += io.wchar;
    for (int c : children_of(p)) todo.push_back(c);
  }
  return sum;
}

}  // namespace isolab
