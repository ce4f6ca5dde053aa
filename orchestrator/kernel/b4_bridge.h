// `b4 am` (kernel.org's b4, Debian 12: 0.12) on a local mbox, offline: the series as b4 takes it
// off a list, with the trailers of the replies (Reviewed-by, Acked-by, Tested-by, ...) folded
// into each patch's commit message. b4 names no patch it cannot read and can exit 0 with an
// incomplete or wrong series, so its answer is used only for the patches the thread's own
// reading chose (kernel/series_choice.h), matched by Message-ID.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sys/process.h"

namespace isolab {

struct B4Patch {
  std::string message_id;  // of the mail b4 made it from ("<...>")
  std::string text;        // b4's am-ready message
};

struct B4Answer {
  bool answered = false;  // b4 wrote an am-ready mbox
  // "b4 0.12.0 am: 3 patches", "b4 is not installed", "b4 0.12.0 am exited 1: ValueError: ...",
  // "b4 0.12.0 am wrote no patch: Could not find any patches in the series."
  std::string status;
  std::vector<B4Patch> patches;  // in b4's order
};

// Runs `b4 -n --offline-mode am -C -m <mbox> -o <dir>` in work_dir (created, then removed),
// with HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME inside it and no git configuration but a fixed
// user identity (b4 needs one), so no user setting or cache changes the answer; at most 60 s. Never
// throws for what b4 does: a b4 that is missing, fails or writes nothing is an answer with answered
// == false.
B4Answer run_b4_am(const std::filesystem::path& mbox, ProcessRunner& runner,
                   const std::filesystem::path& work_dir);

}  // namespace isolab
