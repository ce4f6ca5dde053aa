#include "kernel/mbox_series.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <map>
#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// A whole decimal number of 1-4 digits.
std::optional<int> small_number(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 4) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// The tags of one bracket group, applied to p; true when the group holds PATCH or RFC.
bool read_group(std::string_view group, PatchSubject& p) {
  bool patch = false;
  std::size_t i = 0;
  while (i < group.size()) {
    while (i < group.size() && group[i] == ' ') ++i;
    std::size_t j = group.find(' ', i);
    if (j == std::string_view::npos) j = group.size();
    std::string_view tok = group.substr(i, j - i);
    i = j;
    if (starts_with_nocase(tok, "patch")) {  // PATCH, or PATCHv2 as older series write it
      patch = true;
      tok.remove_prefix(5);
    } else if (starts_with_nocase(tok, "rfc") && tok.size() == 3) {
      patch = true;
      continue;
    }
    const std::size_t slash = tok.find('/');
    if (tok.size() > 1 && (tok[0] == 'v' || tok[0] == 'V')) {
      if (auto v = small_number(tok.substr(1)); v && *v > 0) p.version = *v;
    } else if (slash != std::string_view::npos) {
      auto m = small_number(tok.substr(0, slash));
      auto n = small_number(tok.substr(slash + 1));
      if (m && n && *n > 0 && *m <= *n) {
        p.index = *m;
        p.total = *n;
      }
    }
  }
  return patch;
}

std::string quoted(const MailMessage& m) { return "'" + sanitize_excerpt(m.subject, 100) + "'"; }

std::string version_name(int v) { return "v" + std::to_string(v); }

// The patches of the chosen version by m; throws on a duplicate, a disagreeing total or a
// patch without a diff.
std::map<int, const MailMessage*> slots_of(const std::vector<MailMessage>& messages,
                                           const std::vector<PatchSubject>& at, int version,
                                           int total, const std::string& where) {
  std::map<int, const MailMessage*> slots;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (at[i].version != version || at[i].index < 1) continue;
    const MailMessage& m = messages[i];
    if (at[i].total != total)
      throw Error(where + ": " + quoted(m) + " is numbered out of " + std::to_string(at[i].total) +
                  ", the series' first patch out of " + std::to_string(total));
    if (!m.has_diff) throw Error(where + ": " + quoted(m) + " carries no diff");
    auto [it, fresh] = slots.emplace(at[i].index, &m);
    if (!fresh)
      throw Error(where + ": patch " + std::to_string(at[i].index) + "/" + std::to_string(total) +
                  " of " + version_name(version) + " appears twice: " + quoted(*it->second) +
                  " and " + quoted(m));
  }
  return slots;
}

// "1/3, 3/3": the numbers the series has, for the message of a missing one.
std::string have_list(const std::map<int, const MailMessage*>& slots, int total) {
  std::string s;
  for (const auto& [m, msg] : slots)
    s += (s.empty() ? "" : ", ") + std::to_string(m) + "/" + std::to_string(total);
  return s.empty() ? "none" : s;
}

// "From <sender> <date>" with an asctime date ("Mon Sep 17 00:00:00 2001"), as git format-patch,
// lore and mail clients write the mbox separator; a body line "From the trace ..." is not one.
bool separator_line(std::string_view line) {
  static const std::regex re(R"(From \S+ .*[0-9]{2}:[0-9]{2}:[0-9]{2}.* [0-9]{4}\s*)");
  return line.substr(0, 5) == "From " && std::regex_match(line.begin(), line.end(), re);
}

ProcessResult run_git(ProcessRunner& runner, std::vector<std::string> argv, const fs::path& cwd) {
  ProcessSpec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  s.timeout = std::chrono::seconds(60);
  return runner.run(s);
}

// The subject `git mailinfo -k` decodes from one message file, and whether the message has a
// diff (mailinfo's patch output holds a "diff " or "--- "/"+++ " line).
MailMessage read_message(const fs::path& file, const fs::path& work, ProcessRunner& runner) {
  const fs::path msg = work / "msg", patch = work / "patch";
  ProcessResult r = run_git(runner,
                            {"sh", "-c", "exec git mailinfo -k \"$1\" \"$2\" < \"$3\"", "sh",
                             msg.string(), patch.string(), file.string()},
                            work);
  if (!r.ok())
    throw Error(file.filename().string() + ": git mailinfo " + r.describe() + ": " +
                sanitize_excerpt(r.err, 200));
  MailMessage m;
  for (std::size_t pos = 0; pos < r.out.size();) {
    std::size_t nl = r.out.find('\n', pos);
    if (nl == std::string::npos) nl = r.out.size();
    std::string_view line(r.out.data() + pos, nl - pos);
    if (line.substr(0, 9) == "Subject: ") m.subject = std::string(line.substr(9));
    pos = nl + 1;
  }
  const std::string body = "\n" + read_file(patch);
  m.has_diff =
      body.find("\ndiff ") != std::string::npos ||
      (body.find("\n--- ") != std::string::npos && body.find("\n+++ ") != std::string::npos);
  m.text = read_file(file);
  return m;
}

}  // namespace

std::optional<PatchSubject> parse_patch_subject(std::string_view subject) {
  PatchSubject p;
  std::string_view s = trim_space(subject);
  for (bool more = true; more;) {
    more = false;
    for (std::string_view pre : {"re:", "aw:", "fwd:", "fw:"})
      if (starts_with_nocase(s, pre)) {
        p.reply = p.reply || pre == "re:" || pre == "aw:";
        s = trim_space(s.substr(pre.size()));
        more = true;
      }
  }
  bool patch = false;
  while (!s.empty() && s.front() == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos) break;
    patch = read_group(s.substr(1, close - 1), p) || patch;
    s = trim_space(s.substr(close + 1));
  }
  if (!patch) return std::nullopt;
  return p;
}

std::vector<SeriesPatch> select_series(const std::vector<MailMessage>& messages,
                                       const std::string& where) {
  std::vector<PatchSubject> at(messages.size());
  int version = 0, total = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto p = parse_patch_subject(messages[i].subject);
    // Replies and mails without a PATCH prefix get version 0, which no series has.
    at[i] = p && !p->reply ? *p : PatchSubject{.reply = true, .version = 0, .index = -1};
    if (at[i].index >= 1 && at[i].version > version) {
      version = at[i].version;
      total = at[i].total;
    }
  }
  if (version == 0)
    throw Error(where + ": no patch among its " + std::to_string(messages.size()) +
                " messages (a patch's subject starts [PATCH m/n])");
  const auto slots = slots_of(messages, at, version, total, where);
  std::vector<SeriesPatch> out;
  for (int m = 1; m <= total; ++m) {
    auto it = slots.find(m);
    if (it == slots.end())
      throw Error(where + ": patch " + std::to_string(m) + "/" + std::to_string(total) + " of " +
                  version_name(version) + " is missing (the mbox has " + have_list(slots, total) +
                  ")");
    auto p = parse_patch_subject(it->second->subject);
    out.push_back({*p, it->second->subject, it->second->text});
  }
  return out;
}

bool is_mbox_series(std::string_view text) {
  int separators = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (separator_line(text.substr(pos, nl - pos)) && ++separators > 1) return true;
    pos = nl + 1;
  }
  return false;
}

std::vector<MailMessage> read_mbox(const fs::path& mbox, ProcessRunner& runner,
                                   const fs::path& work_dir) {
  fs::remove_all(work_dir);
  fs::create_directories(work_dir / "split");
  ProcessResult r = run_git(
      runner, {"git", "mailsplit", "--mboxrd", "-o" + (work_dir / "split").string(), mbox.string()},
      work_dir);
  if (!r.ok())
    throw Error(mbox.string() + ": git mailsplit " + r.describe() + ": " +
                sanitize_excerpt(r.err, 200));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(work_dir / "split")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<MailMessage> out;
  for (const auto& f : files) out.push_back(read_message(f, work_dir, runner));
  fs::remove_all(work_dir);
  return out;
}

std::string mail_subject(const fs::path& patch, ProcessRunner& runner) {
  static std::atomic<int> calls{0};
  const fs::path work =
      fs::temp_directory_path() /
      ("isolab-mailinfo-" + std::to_string(::getpid()) + "-" + std::to_string(++calls));
  std::error_code ec;
  fs::create_directories(work, ec);
  std::string subject;
  try {
    subject = read_message(patch, work, runner).subject;
  } catch (const std::exception&) {  // not a mail: no subject
  }
  fs::remove_all(work, ec);
  return subject;
}

std::vector<fs::path> expand_mbox_series(const fs::path& mbox, const fs::path& out_root,
                                         ProcessRunner& runner) {
  const fs::path dir = out_root / sha256_file(mbox).substr(0, 16);
  const fs::path work = out_root / ("work-" + std::to_string(::getpid()));
  const std::vector<SeriesPatch> series =
      select_series(read_mbox(mbox, runner, work), mbox.string());
  fs::create_directories(dir);
  std::vector<fs::path> out;
  for (const auto& p : series) {
    std::string name = std::to_string(p.at.index);
    name = std::string(4 - std::min<std::size_t>(4, name.size()), '0') + name + ".patch";
    const fs::path f = dir / name;
    std::error_code ec;
    if (!fs::is_regular_file(f, ec) || read_file(f) != p.text) write_file_atomic(f, p.text);
    out.push_back(f);
  }
  return out;
}

}  // namespace isolab
