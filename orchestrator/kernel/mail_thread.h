// The messages of one mbox file as git reads them: `git mailsplit --mboxrd` splits the file,
// `git mailinfo -k --no-inbody-headers` decodes each message's own Subject (RFC 2047), and the
// threading headers (Message-ID, In-Reply-To, References) and the in-body Subject at the top
// of the body are read from the message itself.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sys/process.h"

namespace isolab {

// One message of the mbox.
struct MailMessage {
  int position = 0;          // 1-based place in the file
  std::string subject;       // the mail's own Subject header, decoded, prefix kept
  std::string body_subject;  // a "Subject:" line among the in-body headers at the top of the
                             // body (git am's in-body header), "" without one
  std::string message_id;    // "<...>" as written, "" without one
  std::string in_reply_to;   // the first "<...>" of In-Reply-To, "" without one
  std::vector<std::string> references;  // the "<...>" of References, in order
  bool has_diff = false;                // the body carries a diff (a "diff " or "---"/"+++")
  std::string text;                     // the message as mailsplit wrote it, for git am
};

// "message 4 <id@host> '[PATCH 3/2] subject'": the message by its place, Message-ID and
// subject (sanitized, at most 100 bytes), for every message that names one.
std::string describe_message(const MailMessage& m);

// Reads the messages of an mbox, working in work_dir (created, then removed). Throws
// isolab::Error naming the file (and the message's place in it) when git fails.
std::vector<MailMessage> read_mbox(const std::filesystem::path& mbox, ProcessRunner& runner,
                                   const std::filesystem::path& work_dir);

// The Subject of a patch file's mail as `git mailinfo -k` decodes it (prefix kept, in-body
// headers honoured as git am does); "" for a bare diff or when git cannot read the file.
std::string mail_subject(const std::filesystem::path& patch, ProcessRunner& runner);

// The trailers ("Reviewed-by: A <a@b>", in order) of a message's commit message, as
// `git interpret-trailers --parse` reads them from what `git mailinfo -k` keeps of the body.
// Throws isolab::Error when git fails.
std::vector<std::string> message_trailers(const std::string& message_text, ProcessRunner& runner,
                                          const std::filesystem::path& work_dir);

// The "<...>" tokens of a header value, in order.
std::vector<std::string> message_ids_in(std::string_view value);

}  // namespace isolab
