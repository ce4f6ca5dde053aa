#include "cli/common.h"

#include <cstdlib>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_document.h"

namespace isolab {

namespace fs = std::filesystem;

fs::path self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : p.parent_path();
}

fs::path beside_isolab(const char* env_var, const char* file) {
  if (const char* e = std::getenv(env_var)) return e;
  return self_dir() / file;
}

std::string read_input(const std::string& arg, const std::string& file) {
  if (!file.empty()) {
    if (file == "-") {
      std::string s, line;
      while (std::getline(std::cin, line)) s += line + "\n";
      return s;
    }
    if (const std::string dir = directory_given(file); !dir.empty()) throw Error(dir);
    return read_file(file, 64u << 20);
  }
  return arg;
}

// --parallel: "" -> -1 (the spec's), "auto" -> 0, else N >= 1. Throws Error.
int parse_parallel(const std::string& v) {
  if (v.empty()) return -1;
  if (v == "auto") return 0;
  try {
    std::size_t used = 0;
    int n = std::stoi(v, &used);
    if (used == v.size() && n >= 1 && n <= 256) return n;
  } catch (const std::exception&) {
  }
  throw Error("--parallel: expected auto or a number in [1, 256], got '" + v + "'");
}

void with_history(const fs::path& results_dir, const std::function<void(HistoryDb&)>& step) {
  try {
    auto db = HistoryDb::open_in(results_dir);
    step(db);
  } catch (const std::exception& e) {
    std::cerr << "isolab: warning: history index: " << e.what() << "\n";
  }
}

}  // namespace isolab
