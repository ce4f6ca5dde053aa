// A patch series as it is mailed: one mbox file holding a cover letter, the patches
// "[PATCH vN m/n] subject" in any order and replies, as a lore thread download (mboxrd),
// `b4 am` output or `git format-patch --stdout` gives it. git splits it (`git mailsplit
// --mboxrd`) and decodes each subject (`git mailinfo -k`); the series is the newest version's
// patches 1..n in order, each the message's bytes as mailsplit wrote them (for a format-patch
// mbox, byte for byte the files format-patch writes, so the kernel build key is the same).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/process.h"

namespace isolab {

// What a subject's bracketed prefix says: "Re: [RFC PATCH v4 02/10] mm: x" is a reply to patch 2
// of 10 of version 4. Tags other than vN and m/n (RFC, RESEND, net-next, 6.1.y) are ignored.
struct PatchSubject {
  bool reply = false;  // starts with Re: (any case), also after Fwd:
  int version = 1;     // vN; 1 without one
  int index = 1;       // m of m/n; 0 is the cover letter; 1 without m/n
  int total = 1;       // n of m/n; 1 without m/n
};

// nullopt when the subject has no leading bracket group with PATCH or RFC in it.
std::optional<PatchSubject> parse_patch_subject(std::string_view subject);

// One message of the mbox: its decoded subject, whether its body carries a diff, its bytes.
struct MailMessage {
  std::string subject;
  bool has_diff = false;
  std::string text;
};

struct SeriesPatch {
  PatchSubject at;
  std::string subject;  // decoded, prefix kept
  std::string text;     // the message, for git am
};

// The newest version's patches 1..n in order. Replies, cover letters, mails without a PATCH
// prefix and older versions are left out. Throws isolab::Error naming the patch: a patch
// missing from 1..n, one m/n twice, totals that disagree, a [PATCH m/n] without a diff, or no
// patch at all; `where` (the file) starts the message.
std::vector<SeriesPatch> select_series(const std::vector<MailMessage>& messages,
                                       const std::string& where);

// True when text holds more than one message: two or more mbox separator lines ("From ", a
// sender, an asctime date: "From 5d7f... Mon Sep 17 00:00:00 2001"). A single format-patch file
// is not; format-patch files concatenated (also without their signature's blank line) are.
bool is_mbox_series(std::string_view text);

// Reads the messages of an mbox with git mailsplit and git mailinfo, working in work_dir
// (created, then removed). Throws isolab::Error when git fails, naming the file.
std::vector<MailMessage> read_mbox(const std::filesystem::path& mbox, ProcessRunner& runner,
                                   const std::filesystem::path& work_dir);

// The Subject of a patch file's mail as `git mailinfo -k` decodes it (prefix kept); "" for a
// bare diff or when git cannot read the file.
std::string mail_subject(const std::filesystem::path& patch, ProcessRunner& runner);

// The series of an mbox written as out_root/<first 16 hex of the mbox's sha256>/NNNN.patch
// (NNNN = m, zero-padded; written once, content-addressed), in order. Throws isolab::Error as
// read_mbox and select_series do.
std::vector<std::filesystem::path> expand_mbox_series(const std::filesystem::path& mbox,
                                                      const std::filesystem::path& out_root,
                                                      ProcessRunner& runner);

}  // namespace isolab
