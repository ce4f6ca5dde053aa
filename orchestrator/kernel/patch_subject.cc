#include "kernel/patch_subject.h"

#include <cctype>
#include <charconv>
#include <vector>

#include "base/text.h"

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

// The tokens of one bracket group, split at spaces and commas (patchwork writes "net,v2,1/2").
std::vector<std::string_view> tokens_of(std::string_view group) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < group.size()) {
    while (i < group.size() && (group[i] == ' ' || group[i] == ',' || group[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < group.size() && group[j] != ' ' && group[j] != ',' && group[j] != '\t') ++j;
    if (j > i) out.push_back(group.substr(i, j - i));
    i = j;
  }
  return out;
}

// "v10.1" or "V2": the version and its point revision.
bool read_version(std::string_view tok, PatchSubject& p) {
  if (tok.size() < 2 || (tok[0] != 'v' && tok[0] != 'V')) return false;
  tok.remove_prefix(1);
  const std::size_t dot = tok.find('.');
  auto v = small_number(tok.substr(0, dot));
  if (!v || *v < 1) return false;
  int revision = 0;
  if (dot != std::string_view::npos) {
    auto r = small_number(tok.substr(dot + 1));
    if (!r) return false;
    revision = *r;
  }
  p.version = *v;
  p.revision = revision;
  return true;
}

// "3/6": the position.
bool read_slash_position(std::string_view tok, PatchSubject& p) {
  const std::size_t slash = tok.find('/');
  if (slash == std::string_view::npos) return false;
  auto m = small_number(tok.substr(0, slash));
  auto n = small_number(tok.substr(slash + 1));
  if (!m || !n || *n < 1) return false;
  p.index = *m;
  p.total = *n;
  p.numbered = true;
  return true;
}

// The tags of one bracket group, applied to p; true when the group is a patch prefix.
bool read_group(std::string_view group, PatchSubject& p) {
  const std::vector<std::string_view> toks = tokens_of(group);
  bool patch = false;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    std::string_view tok = toks[i];
    if (starts_with_nocase(tok, "patch")) {  // PATCH, or PATCHv2 as older series write it
      patch = true;
      tok.remove_prefix(5);
      if (tok.empty()) continue;
    } else if (starts_with_nocase(tok, "rfc") && tok.size() == 3) {
      patch = true;
      continue;
    }
    if (read_version(tok, p) || read_slash_position(tok, p)) {
      patch = true;
      continue;
    }
    // Mercurial: "1 of 2".
    if (i + 2 < toks.size() && starts_with_nocase(toks[i + 1], "of") && toks[i + 1].size() == 2) {
      auto m = small_number(tok);
      auto n = small_number(toks[i + 2]);
      if (m && n && *n > 0) {
        p.index = *m;
        p.total = *n;
        p.numbered = p.of_form = patch = true;
        i += 2;
      }
    }
  }
  return patch;
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
    PatchSubject q = p;
    if (read_group(s.substr(1, close - 1), q)) {
      p = q;
      patch = true;
    }
    s = trim_space(s.substr(close + 1));
  }
  if (!patch) return std::nullopt;
  return p;
}

std::string version_text(const PatchSubject& p) {
  return "v" + std::to_string(p.version) + (p.revision > 0 ? "." + std::to_string(p.revision) : "");
}

std::string position_text(const PatchSubject& p) {
  std::string s = version_text(p);
  if (!p.numbered) return s;
  return s + " " + std::to_string(p.index) + (p.of_form ? " of " : "/") + std::to_string(p.total);
}

}  // namespace isolab
