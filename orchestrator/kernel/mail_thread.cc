#include "kernel/mail_thread.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

ProcessResult run_git(ProcessRunner& runner, std::vector<std::string> argv, const fs::path& cwd) {
  ProcessSpec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  s.timeout = std::chrono::seconds(60);
  // No user or system configuration (mailinfo.scissors, am.keepcr) changes what git reads.
  s.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  return runner.run(s);
}

bool header_is(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  return true;
}

// The value of a header of the message's own header block, continuation lines unfolded.
std::string header_value(std::string_view text, std::string_view name) {
  std::string value;
  bool in = false;
  for (std::string_view l : text_lines(text)) {
    if (l.empty()) break;  // end of the header block
    if (in && (l.front() == ' ' || l.front() == '\t')) {
      value += " " + std::string(trim_space(l));
      continue;
    }
    if (in) break;
    if (header_is(l, name)) {
      value = std::string(trim_space(l.substr(name.size() + 1)));
      in = true;
    }
  }
  return value;
}

// The Subject among the in-body headers at the top of a body (From:, Date:, Subject: lines,
// blank lines between them allowed), "" without one.
std::string in_body_subject(std::string_view body) {
  for (std::string_view l : text_lines(body)) {
    if (trim_space(l).empty() || header_is(l, "from") || header_is(l, "date")) continue;
    if (header_is(l, "subject")) return std::string(trim_space(l.substr(8)));
    break;
  }
  return "";
}

struct MailInfo {
  std::string subject, msg, patch;
};

// `git mailinfo -k` of one message file: its Subject, the commit message and the patch.
MailInfo mailinfo(const fs::path& file, const fs::path& work, ProcessRunner& runner,
                  bool inbody_headers) {
  const fs::path msg = work / "msg", patch = work / "patch";
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   std::string("exec git mailinfo -k ") +
                                       (inbody_headers ? "" : "--no-inbody-headers ") +
                                       "\"$1\" \"$2\" < \"$3\"",
                                   "sh",
                                   msg.string(),
                                   patch.string(),
                                   file.string()};
  ProcessResult r = run_git(runner, argv, work);
  if (!r.ok())
    throw Error(file.filename().string() + ": git mailinfo " + r.describe() + ": " +
                sanitize_excerpt(r.err, 200));
  MailInfo mi;
  for (std::string_view l : text_lines(r.out))
    if (l.substr(0, 9) == "Subject: ") mi.subject = std::string(l.substr(9));
  mi.msg = read_file(msg);
  mi.patch = read_file(patch);
  return mi;
}

MailMessage read_message(const fs::path& file, int position, const fs::path& work,
                         ProcessRunner& runner) {
  const MailInfo mi = mailinfo(file, work, runner, false);
  MailMessage m;
  m.position = position;
  m.subject = mi.subject;
  m.body_subject = in_body_subject(mi.msg);
  m.text = read_file(file);
  const auto ids = message_ids_in(header_value(m.text, "message-id"));
  if (!ids.empty()) m.message_id = ids.front();
  const auto parent = message_ids_in(header_value(m.text, "in-reply-to"));
  if (!parent.empty()) m.in_reply_to = parent.front();
  m.references = message_ids_in(header_value(m.text, "references"));
  const std::string body = "\n" + mi.patch;
  m.has_diff =
      body.find("\ndiff ") != std::string::npos ||
      (body.find("\n--- ") != std::string::npos && body.find("\n+++ ") != std::string::npos);
  return m;
}

fs::path fresh_work_dir(const std::string& what) {
  static std::atomic<int> calls{0};
  fs::path work = fs::temp_directory_path() / ("isolab-" + what + "-" + std::to_string(::getpid()) +
                                               "-" + std::to_string(++calls));
  fs::remove_all(work);
  fs::create_directories(work);
  return work;
}

}  // namespace

std::vector<std::string> message_ids_in(std::string_view value) {
  std::vector<std::string> out;
  for (std::size_t at = 0; (at = value.find('<', at)) != std::string_view::npos;) {
    const std::size_t close = value.find('>', at);
    if (close == std::string_view::npos) break;
    out.emplace_back(value.substr(at, close - at + 1));
    at = close + 1;
  }
  return out;
}

std::string describe_message(const MailMessage& m) {
  return "message " + std::to_string(m.position) +
         (m.message_id.empty() ? "" : " " + sanitize_excerpt(m.message_id, 120)) + " '" +
         sanitize_excerpt(m.subject.empty() ? m.body_subject : m.subject, 100) + "'";
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
  for (const auto& f : files) {
    const int position = static_cast<int>(out.size()) + 1;
    try {
      out.push_back(read_message(f, position, work_dir, runner));
    } catch (const Error& e) {
      throw Error(mbox.string() + ": message " + std::to_string(position) + ": " + e.what());
    }
  }
  fs::remove_all(work_dir);
  return out;
}

std::string mail_subject(const fs::path& patch, ProcessRunner& runner) {
  const fs::path work = fresh_work_dir("mailinfo");
  std::string subject;
  try {
    subject = mailinfo(patch, work, runner, true).subject;
  } catch (const std::exception&) {  // not a mail: no subject
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return subject;
}

std::vector<std::string> message_trailers(const std::string& message_text, ProcessRunner& runner,
                                          const fs::path& work_dir) {
  fs::create_directories(work_dir);
  write_file_atomic(work_dir / "message", message_text);
  const MailInfo mi = mailinfo(work_dir / "message", work_dir, runner, true);
  write_file_atomic(work_dir / "commit-message", mi.msg);
  ProcessResult r = run_git(
      runner, {"git", "interpret-trailers", "--parse", (work_dir / "commit-message").string()},
      work_dir);
  if (!r.ok())
    throw Error("git interpret-trailers " + r.describe() + ": " + sanitize_excerpt(r.err, 200));
  std::vector<std::string> out;
  for (std::string_view l : text_lines(r.out))
    if (!trim_space(l).empty()) out.emplace_back(l);
  return out;
}

}  // namespace isolab
