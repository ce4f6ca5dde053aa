// What the bracketed prefix of a mailed patch's subject says, in the forms the kernel's lists
// carry: git format-patch's "[PATCH v4 02/10]", git send-email's "[RFC PATCH net-next v3 0/5]",
// older "[PATCHv2 1/3]", a point reroll "[PATCH v10.1 3/6]", patchwork's comma-separated
// "[net,v2,1/2]" and Mercurial's patchbomb "[PATCH 1 of 2]".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace isolab {

// "Re: [RFC PATCH v4 02/10] mm: x" is a reply to patch 2 of 10 of version 4. Tags other than
// the version and the position (RFC, RESEND, net-next, 6.1.y) are ignored.
struct PatchSubject {
  bool reply = false;     // starts with Re: or AW: (any case), also after Fwd:
  int version = 1;        // N of vN or vN.M; 1 without one
  int revision = 0;       // M of vN.M (a reroll of single patches of vN); 0 without
  int index = 1;          // m of m/n or "m of n"; 0 is the cover letter; 1 without a position
  int total = 1;          // n of m/n; 1 without a position
  bool numbered = false;  // the subject carries m/n or "m of n"
  bool of_form = false;   // written "m of n" (Mercurial's patchbomb)
  // m above n ("[PATCH 3/2]"): a patch sent after the series, numbered past its end.
  bool extra() const { return numbered && index > total; }
};

// nullopt when no leading bracket group is a patch prefix: one holding PATCH or RFC, or a
// version or position tag ("[v2 1/3]", patchwork's "[net,v2,1/2]"). "[syzbot] WARNING" is not.
std::optional<PatchSubject> parse_patch_subject(std::string_view subject);

// How a subject numbers itself, for messages: "v10.1 3/6", "v2 0/2", "2 of 2", "v4", "v1".
std::string position_text(const PatchSubject& p);

// The version alone: "v10.1", "v2".
std::string version_text(const PatchSubject& p);

}  // namespace isolab
