// Which messages of a mailed thread make the series to apply, and why each other message is
// left out. The rules, each as the community's tools read a thread:
// - A message's place comes from its own Subject (patch_subject.h); an in-body Subject counts
//   only when the mail's own Subject is no patch prefix or a reply (as git am takes a patch
//   sent in a reply). Replies, cover letters (0/n, "0 of n") and diff-less follow-ups that
//   answer a message of the thread (with or without Re:, as b4 reads them) are left out.
// - The newest version N is taken; for each place m its newest point reroll vN.M replaces
//   vN's patch. The series has max(n) places; a place vN did not re-send is taken from the
//   newest older version numbered out of the same n (a partial reroll, as `b4 am`
//   reconstitutes it). Patches numbered past n ("[PATCH 3/2]") follow, in order (b4 am and
//   patchwork count them in the series).
// - A file of patches only (no reply, cover letter or diff-less mail), one version, no place
//   twice, that is no whole series, is taken in file order as `git am` applies it: a
//   format-patch series followed by an unrelated "[PATCH]", b4 am's output with a patch added.
#pragma once

#include <string>
#include <vector>

#include "kernel/mail_thread.h"
#include "kernel/patch_subject.h"

namespace isolab {

struct ChosenPatch {
  const MailMessage* mail = nullptr;
  PatchSubject at;   // its place, as its subject says
  std::string note;  // why it was taken where that needs saying, else ""
};

struct LeftOutMessage {
  const MailMessage* mail = nullptr;
  std::string why;  // "a reply", "v1 1/3: replaced by v2.1 1/3 (message 4 <id>)", ...
};

struct SeriesChoice {
  std::string version;                   // "v2", "v10"
  std::vector<ChosenPatch> patches;      // in the order to apply
  std::vector<LeftOutMessage> left_out;  // every other message, in file order
  bool whole_file = false;               // taken in file order, as git am applies the file
};

// The choice points into `messages`, which must outlive it.
// Throws isolab::Error starting with `where` (the file) and naming the message by
// describe_message(): a place missing ("patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)"),
// a place twice, a "[PATCH m/n]" without a diff that answers nothing, no patch at all.
SeriesChoice choose_series(const std::vector<MailMessage>& messages, const std::string& where);

}  // namespace isolab
