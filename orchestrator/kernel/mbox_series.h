// A patch series as it is mailed: one mbox file holding a cover letter, the patches in any
// order, rerolls and replies, as a lore thread download (mboxrd), `b4 am` output or
// `git format-patch --stdout` gives it. git reads the messages (kernel/mail_thread.h), the
// thread's own rules choose the series (kernel/series_choice.h), and `b4 am`, where installed
// and where it agrees, folds the replies' trailers into the chosen patches
// (kernel/b4_bridge.h). Each patch is written as its own file for git am: the mail's bytes as
// mailsplit wrote them (for a format-patch mbox, byte for byte the files format-patch writes,
// so the kernel build key is the same), or b4's am-ready message when b4 folded trailers in.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/mail_thread.h"
#include "sys/process.h"

namespace isolab {

// One patch of the series as it was written and why.
struct MailedPatch {
  std::filesystem::path path;  // the file git am applies
  std::string subject;         // the mail's own Subject, decoded
  std::string message_id;      // "" when the mail has none
  std::string place;           // as its subject numbers it: "v2.1 1/3", "v1 3/2", "v4"
  std::string text_from;       // "b4 am" (b4's message, trailers folded) or "git mailsplit"
  std::string b4;  // "took it", "did not take it", "no answer" (MailedSeries::b4 says why)
  std::vector<std::string> trailers;               // of the commit message applied
  std::vector<std::string> trailers_from_replies;  // of those, the ones b4 folded in
  std::string note;                                // why it was taken, where that needs saying
};

struct LeftOutMail {
  std::string message;  // describe_message(): "message 3 <id> 'Re: [PATCH 1/2] ...'"
  std::string why;
};

// How one mbox was read: the record the run's output, the dry run's plan and result.json show.
struct MailedSeries {
  std::filesystem::path mbox;
  std::string version;  // "v2"
  std::string b4;       // B4Answer::status
  bool whole_file = false;
  std::vector<MailedPatch> patches;   // in the order applied
  std::vector<LeftOutMail> left_out;  // every other message, in file order
};

// True when text holds more than one message: two or more mbox separator lines ("From ", a
// sender, an asctime date: "From 5d7f... Mon Sep 17 00:00:00 2001"). A single format-patch file
// is not; format-patch files concatenated (also without their signature's blank line) are.
bool is_mbox_series(std::string_view text);

// Reads the mbox and writes its series as out_root/<first 16 hex of the mbox's sha256>/NNNN.patch
// (NNNN = 1, 2, ... in the order applied, zero-padded; rewritten only when its text changes).
// Throws isolab::Error as read_mbox and choose_series do, the message starting with the file.
MailedSeries expand_mbox_series(const std::filesystem::path& mbox,
                                const std::filesystem::path& out_root, ProcessRunner& runner);

}  // namespace isolab
