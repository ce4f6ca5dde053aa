#include "parse/console.h"

#include <cctype>
#include <cstring>
#include <fstream>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace isolab {

namespace {

constexpr std::size_t kExamineBytes = 4096;
constexpr std::size_t kMaxFindings = 64;
constexpr std::size_t kExcerptLineBytes = 200;
constexpr std::size_t kLinesBefore = 3;
constexpr int kLinesAfter = 8;

// Drops "<N>" and "[    1.234567]" / "[    T1]" prefixes and leading blanks, so that message
// starts can be anchored (userspace text that merely mentions "BUG:" mid-line does not match).
std::string_view message_of(std::string_view l) {
  auto skip_blank = [&] {
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t' || l.front() == '\r'))
      l.remove_prefix(1);
  };
  skip_blank();
  if (l.size() > 2 && l.front() == '<') {
    std::size_t close = l.find('>');
    if (close != std::string_view::npos && close <= 4) l.remove_prefix(close + 1);
  }
  for (int i = 0; i < 3; ++i) {
    skip_blank();
    if (l.empty() || l.front() != '[') break;
    std::size_t close = l.find(']');
    if (close == std::string_view::npos || close > 24) break;
    l.remove_prefix(close + 1);
  }
  skip_blank();
  return l;
}

// "WARNING: CPU: 1 PID: 7 at kernel/foo.c:42 func+0x1/0x2" -> "kernel/foo.c:42";
// "kernel BUG at mm/slub.c:123!" -> "mm/slub.c:123".
std::string location_after_at(std::string_view msg) {
  std::size_t at = msg.find(" at ");
  if (at == std::string_view::npos) return "";
  std::string_view rest = msg.substr(at + 4);
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '!' && rest[end] != '\t') ++end;
  std::string_view loc = rest.substr(0, end);
  if (!contains(loc, ":")) return "";
  return sanitize_excerpt(loc, 200);
}

std::optional<ConsoleFinding> classify_line(std::string_view line) {
  std::string_view msg = message_of(line);
  ConsoleFinding f;
  auto make = [&](const char* klass, const char* kind, bool fatal) {
    f.klass = klass;
    f.kind = kind;
    f.fatal = fatal;
    f.summary = sanitize_excerpt(msg, 300);
    return f;
  };
  if (contains(msg, "Kernel panic - not syncing")) return make("panic", "Kernel panic", true);
  if (contains(msg, "BUG: soft lockup") || contains(msg, "soft lockup - CPU#"))
    return make("lockup", "soft lockup", true);
  if (contains(msg, "hard LOCKUP")) return make("lockup", "hard lockup", true);
  if (contains(msg, "BUG: workqueue lockup")) return make("lockup", "workqueue lockup", true);
  if (contains(msg, "rcu") &&
      (contains(msg, "self-detected stall") || contains(msg, "detected stall")))
    return make("rcu_stall", "RCU stall", true);
  if (msg.starts_with("INFO: task ") && contains(msg, "blocked for more than"))
    return make("hung_task", "hung task", false);
  if (msg.starts_with("Oops")) {
    std::string_view rest = msg.substr(4);
    if (rest.starts_with(":") || rest.starts_with(" -") || rest.starts_with(" ["))
      return make("oops", "Oops", true);
  }
  if (msg.starts_with("kernel BUG at ")) {
    make("oops", "kernel BUG", true);
    f.location = location_after_at(msg);
    return f;
  }
  if (msg.starts_with("general protection fault"))
    return make("oops", "general protection fault", true);
  if (msg.starts_with("BUG: ")) return make("oops", "BUG", true);
  if (msg.starts_with("WARNING: ")) {
    make("warning", "WARNING", true);
    f.location = location_after_at(msg);
    return f;
  }
  return std::nullopt;
}

}  // namespace

ConsoleClassifier::ConsoleClassifier() {
  report_.findings.reserve(kMaxFindings);  // never grows past this: pending pointers stay valid
  line_.reserve(kExamineBytes);
}

void ConsoleClassifier::feed(std::string_view chunk) {
  report_.bytes += chunk.size();
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    std::size_t n =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - chunk.data()) : chunk.size();
    if (line_.size() < kExamineBytes)
      line_.append(chunk.data(), std::min(n, kExamineBytes - line_.size()));
    line_len_ += n;
    if (!nl) break;
    end_line();
    chunk.remove_prefix(n + 1);
  }
}

void ConsoleClassifier::end_line() {
  ++report_.lines;
  if (line_len_ > kExamineBytes) ++report_.long_lines;
  std::string_view l = line_;
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  std::string cut = sanitize_excerpt(l, kExcerptLineBytes);

  // Lines after earlier findings extend their excerpts.
  for (auto it = pending_.begin(); it != pending_.end();) {
    for (ConsoleFinding* target : it->targets) target->excerpt += "\n" + cut;
    if (--it->lines_after == 0) {
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }

  note_gp_kthread_starvation(message_of(l), cut);
  if (auto f = classify_line(l)) {
    f->line = report_.lines;
    for (const auto& b : before_) f->excerpt += b + "\n";
    f->excerpt += cut;
    ++report_.findings_total;
    Pending p;
    const bool kept = report_.findings.size() < kMaxFindings;
    if (kept) {
      report_.findings.push_back(*f);
      p.targets.push_back(&report_.findings.back());
    }
    const bool fatal = f->fatal && !report_.fatal;
    if (fatal) {
      report_.fatal = *f;
      p.targets.push_back(&*report_.fatal);
    }
    if (f->klass == "rcu_stall") {
      rcu_stall_line_ = report_.lines;
      rcu_stall_index_ = kept ? static_cast<long>(report_.findings.size()) - 1 : -1;
      rcu_stall_is_fatal_ = fatal;
    }
    p.lines_after = kLinesAfter;
    if (!p.targets.empty()) pending_.push_back(std::move(p));
  }

  before_.push_back(std::move(cut));
  if (before_.size() > kLinesBefore) before_.erase(before_.begin());
  line_.clear();
  line_len_ = 0;
}

// "rcu: rcu_preempt kthread starved for 5254 jiffies! g1465 f0x0 RCU_GP_WAIT_FQS(5)
// ->state=0x0 ->cpu=1" (6.1) within kStarvedWindow lines of an RCU stall: recorded on it.
void ConsoleClassifier::note_gp_kthread_starvation(std::string_view msg, const std::string& cut) {
  constexpr std::size_t kStarvedWindow = 64;
  if (rcu_stall_line_ == 0 || report_.lines - rcu_stall_line_ > kStarvedWindow) return;
  if (!contains(msg, " kthread starved for ") || !contains(msg, "->state=0x0 ")) return;
  if (rcu_stall_index_ >= 0 && report_.findings[rcu_stall_index_].gp_kthread_starved.empty())
    report_.findings[rcu_stall_index_].gp_kthread_starved = cut;
  if (rcu_stall_is_fatal_ && report_.fatal->gp_kthread_starved.empty())
    report_.fatal->gp_kthread_starved = cut;
}

ConsoleReport ConsoleClassifier::finish() {
  if (line_len_ > 0 || !line_.empty()) end_line();
  pending_.clear();
  return std::move(report_);
}

ConsoleReport classify_console(std::string_view log) {
  ConsoleClassifier c;
  c.feed(log);
  return c.finish();
}

ConsoleReport classify_console_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read console log " + path.string());
  ConsoleClassifier c;
  std::string buf(1u << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    c.feed(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw Error("error reading console log " + path.string());
  return c.finish();
}

namespace {
nlohmann::json finding_json(const ConsoleFinding& f) {
  nlohmann::json j = {{"class", f.klass},    {"kind", f.kind},       {"fatal", f.fatal},
                      {"line", f.line},      {"summary", f.summary}, {"location", f.location},
                      {"excerpt", f.excerpt}};
  if (!f.gp_kthread_starved.empty()) j["gp_kthread_starved"] = f.gp_kthread_starved;
  return j;
}
}  // namespace

nlohmann::json console_report_to_json(const ConsoleReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) findings.push_back(finding_json(f));
  return {{"fatal", report.fatal ? finding_json(*report.fatal) : nlohmann::json(nullptr)},
          {"findings", findings},
          {"findings_total", report.findings_total},
          {"lines", report.lines},
          {"bytes", report.bytes},
          {"long_lines", report.long_lines}};
}

namespace {

// The token before "<xx>" in a "Code: .. .. <xx> .." line, or "" when there is none.
std::string byte_before_mark(std::string_view line) {
  const auto mark = line.find('<');
  if (mark == std::string_view::npos || mark < 3 || line[mark - 1] != ' ') return "";
  const std::string_view b = line.substr(mark - 3, 2);
  for (char ch : b)
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return "";
  std::string out(b);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

std::optional<std::string> int3_trap_byte(std::string_view log) {
  const auto at = log.find("int3: 0000 [#");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t pos = at;
  for (int lines = 0; lines < 40 && pos < log.size(); ++lines) {
    const auto eol = log.find('\n', pos);
    const std::string_view line = log.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    if (const auto code = line.find("Code: "); code != std::string_view::npos) {
      const std::string b = byte_before_mark(line.substr(code));
      if (b.empty()) return std::nullopt;
      return b;
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return std::nullopt;
}

}  // namespace isolab
