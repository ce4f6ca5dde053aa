#include "kernel/mbox_series.h"

#include <unistd.h>

#include <algorithm>
#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "kernel/b4_bridge.h"
#include "kernel/series_choice.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

// "From <sender> <date>" with an asctime date ("Mon Sep 17 00:00:00 2001"), as git format-patch,
// lore and mail clients write the mbox separator; a body line "From the trace ..." is not one.
bool separator_line(std::string_view line) {
  static const std::regex re(R"(From \S+ .*[0-9]{2}:[0-9]{2}:[0-9]{2}.* [0-9]{4}\s*)");
  return line.substr(0, 5) == "From " && std::regex_match(line.begin(), line.end(), re);
}

std::string file_name(std::size_t n) {
  std::string name = std::to_string(n);
  return std::string(4 - std::min<std::size_t>(4, name.size()), '0') + name + ".patch";
}

const B4Patch* b4_patch_for(const B4Answer& b4, const MailMessage& m) {
  if (m.message_id.empty()) return nullptr;
  for (const auto& p : b4.patches)
    if (p.message_id == m.message_id) return &p;
  return nullptr;
}

// The trailers of `text` that `base` does not carry.
std::vector<std::string> added(const std::vector<std::string>& text,
                               const std::vector<std::string>& base) {
  std::vector<std::string> out;
  for (const auto& t : text)
    if (std::find(base.begin(), base.end(), t) == base.end()) out.push_back(t);
  return out;
}

// One chosen patch: b4's message when b4 took the same mail and folded trailers in, else the
// mail as mailsplit wrote it.
MailedPatch written_patch(const ChosenPatch& c, const B4Answer& b4, ProcessRunner& runner,
                          const fs::path& work, std::string& text) {
  MailedPatch p;
  p.subject = c.mail->subject.empty() ? c.mail->body_subject : c.mail->subject;
  p.message_id = c.mail->message_id;
  p.place = position_text(c.at);
  p.note = c.note;
  text = c.mail->text;
  p.text_from = "git mailsplit";
  p.trailers = message_trailers(text, runner, work);
  const B4Patch* from_b4 = b4.answered ? b4_patch_for(b4, *c.mail) : nullptr;
  p.b4 = !b4.answered ? "no answer" : from_b4 ? "took it" : "did not take it";
  if (!from_b4) return p;
  const auto b4_trailers = message_trailers(from_b4->text, runner, work);
  p.trailers_from_replies = added(b4_trailers, p.trailers);
  if (p.trailers_from_replies.empty()) return p;
  text = from_b4->text;
  p.text_from = "b4 am";
  p.trailers = b4_trailers;
  return p;
}

}  // namespace

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

MailedSeries expand_mbox_series(const fs::path& mbox, const fs::path& out_root,
                                ProcessRunner& runner) {
  const fs::path dir = out_root / sha256_file(mbox).substr(0, 16);
  const fs::path work = out_root / ("work-" + std::to_string(::getpid()));
  const std::vector<MailMessage> messages = read_mbox(mbox, runner, work);
  const SeriesChoice choice = choose_series(messages, mbox.string());
  const B4Answer b4 = run_b4_am(mbox, runner, work);
  MailedSeries s{mbox, choice.version, b4.status, choice.whole_file, {}, {}};
  fs::create_directories(dir);
  fs::create_directories(work);
  try {
    for (const auto& c : choice.patches) {
      std::string text;
      MailedPatch p = written_patch(c, b4, runner, work, text);
      p.path = dir / file_name(s.patches.size() + 1);
      std::error_code ec;
      if (!fs::is_regular_file(p.path, ec) || read_file(p.path) != text)
        write_file_atomic(p.path, text);
      s.patches.push_back(std::move(p));
    }
  } catch (...) {
    fs::remove_all(work);
    throw;
  }
  fs::remove_all(work);
  for (const auto& l : choice.left_out) s.left_out.push_back({describe_message(*l.mail), l.why});
  return s;
}

}  // namespace isolab
