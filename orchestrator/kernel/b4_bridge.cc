#include "kernel/b4_bridge.h"

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "kernel/lookup.h"
#include "kernel/mail_thread.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

ProcessSpec b4_spec(std::vector<std::string> args, const fs::path& work) {
  ProcessSpec s;
  s.argv = {"b4"};
  for (auto& a : args) s.argv.push_back(std::move(a));
  s.cwd = work;
  s.timeout = std::chrono::seconds(60);
  s.env = {{"HOME", (work / "home").string()},
           {"XDG_CONFIG_HOME", (work / "home" / "config").string()},
           {"XDG_CACHE_HOME", (work / "home" / "cache").string()},
           {"GIT_CONFIG_NOSYSTEM", "1"},
           {"GIT_CONFIG_GLOBAL", "/dev/null"},
           // b4 0.12 exits 1 without a word when git has no user identity.
           {"GIT_CONFIG_COUNT", "2"},
           {"GIT_CONFIG_KEY_0", "user.name"},
           {"GIT_CONFIG_VALUE_0", "isolab"},
           {"GIT_CONFIG_KEY_1", "user.email"},
           {"GIT_CONFIG_VALUE_1", "isolab@localhost"}};
  return s;
}

// The last non-empty line of b4's output: its error ("ValueError: ...") or its last word.
std::string last_line(const ProcessResult& r) {
  const std::string all = r.out + "\n" + r.err;
  std::size_t end = all.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  const std::size_t start = all.rfind('\n', end);
  return sanitize_excerpt(all.substr(start == std::string::npos ? 0 : start + 1,
                                     end - (start == std::string::npos ? 0 : start + 1) + 1),
                          200);
}

std::string b4_version(ProcessRunner& runner, const fs::path& work) {
  ProcessResult r = runner.run(b4_spec({"--version"}, work));
  return r.ok() ? std::string(trim_space(r.out)) : "";
}

B4Answer answer_in(const fs::path& mbox, ProcessRunner& runner, const fs::path& work) {
  B4Answer a;
  if (!program_in_path("b4")) {
    a.status = "b4 is not installed";
    return a;
  }
  const std::string name = "b4 " + b4_version(runner, work) + " am";
  const fs::path out = work / "out";
  fs::create_directories(out);
  ProcessResult r = runner.run(b4_spec(
      {"-n", "--offline-mode", "am", "-C", "-m", fs::absolute(mbox).string(), "-o", out.string()},
      work));
  if (!r.ok()) {
    a.status = name + " " + r.describe() + ": " + last_line(r);
    return a;
  }
  fs::path mbx;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().extension() == ".mbx") mbx = e.path();
  if (mbx.empty()) {
    a.status = name + " wrote no patch: " + last_line(r);
    return a;
  }
  for (const MailMessage& m : read_mbox(mbx, runner, work / "split"))
    a.patches.push_back({m.message_id, m.text});
  a.answered = !a.patches.empty();
  a.status = name + ": " + std::to_string(a.patches.size()) + " patch(es)";
  return a;
}

}  // namespace

B4Answer run_b4_am(const fs::path& mbox, ProcessRunner& runner, const fs::path& work_dir) {
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  fs::create_directories(work_dir / "home");
  B4Answer a;
  try {
    a = answer_in(mbox, runner, work_dir);
  } catch (const std::exception& e) {  // its output unreadable, or a filesystem error
    a = B4Answer{false, std::string("b4 am's output could not be read: ") + e.what(), {}};
  }
  fs::remove_all(work_dir, ec);
  return a;
}

}  // namespace isolab
