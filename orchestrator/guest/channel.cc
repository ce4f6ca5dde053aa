#include "guest/channel.h"

#include <charconv>

#include "base/files.h"
#include "guest/gunzip.h"

namespace isolab {

const ChannelRecord* ChannelContents::find(const std::string& name) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}

std::map<std::string, std::string> ChannelContents::as_map() const {
  std::map<std::string, std::string> m;
  for (const auto& r : records)
    if (!r.truncated) m[r.name] = r.data;
  return m;
}

namespace {

bool parse_num(std::string_view s, long long& out) {
  if (s.empty() || s.size() > 12) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size() && out.size() < 8) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// A record sent compressed ("<name>.gz", channel.h): its name without the suffix and its data
// decompressed; a stream that does not decompress whole is a problem and a truncated record.
void decompress_record(ChannelRecord& r, std::vector<std::string>& problems) {
  static constexpr std::string_view kGz = ".gz";
  constexpr std::size_t kMaxOut = 256u << 20;
  if (r.name.size() <= kGz.size() || r.name.compare(r.name.size() - kGz.size(), kGz.size(), kGz))
    return;
  GunzipResult g = gunzip(r.data, kMaxOut);
  if (!g.complete && problems.size() < 20)
    problems.push_back("record " + sanitize_excerpt(r.name, 40) +
                       " does not decompress: " + sanitize_excerpt(g.error, 120));
  r.name.resize(r.name.size() - kGz.size());
  r.data = std::move(g.data);
  r.truncated = r.truncated || !g.complete;
}

}  // namespace

ChannelContents parse_channel(std::string_view s, const std::string& nonce) {
  ChannelContents c;
  static constexpr std::string_view kMark = "@@ISOLAB ";
  constexpr long long kMaxLen = 256LL << 20;
  std::size_t pos = 0;
  while (pos < s.size() && c.records.size() < 4096) {
    std::size_t at = s.find(kMark, pos);
    if (at == std::string_view::npos) break;
    if (at > pos && c.problems.size() < 20)
      c.problems.push_back("junk between records: " +
                           sanitize_excerpt(s.substr(pos, at - pos), 80));
    std::size_t eol = s.find('\n', at);
    if (eol == std::string_view::npos || eol - at > 300) {
      c.problems.push_back("unterminated header: " + sanitize_excerpt(s.substr(at, 120), 120));
      pos = at + kMark.size();
      continue;
    }
    auto f = split_spaces(s.substr(at + kMark.size(), eol - at - kMark.size()));
    pos = eol + 1;
    if (f.size() == 2 && f[0] == "DONE") {
      if (f[1] == nonce)
        c.done = true;
      else
        c.problems.emplace_back("DONE with a foreign nonce");
      continue;
    }
    long long rc = 0, len = 0;
    if (f.size() != 5 || f[0] != "REC" || !parse_num(f[3], rc) || !parse_num(f[4], len) ||
        len < 0) {
      c.problems.push_back("malformed header: " + sanitize_excerpt(s.substr(at, eol - at), 120));
      continue;
    }
    if (f[1] != nonce) {
      c.problems.push_back("record with a foreign nonce: " + sanitize_excerpt(f[2], 40));
      continue;
    }
    if (len > kMaxLen) {
      c.problems.push_back("record " + sanitize_excerpt(f[2], 40) + " declares " +
                           std::to_string(len) + " bytes; skipped");
      continue;
    }
    ChannelRecord r;
    r.name = std::string(f[2]);
    r.rc = static_cast<int>(rc);
    std::size_t avail = s.size() - pos;
    if (static_cast<std::size_t>(len) > avail) {
      r.data = std::string(s.substr(pos, avail));
      r.truncated = true;
      pos = s.size();
    } else {
      r.data = std::string(s.substr(pos, static_cast<std::size_t>(len)));
      pos += static_cast<std::size_t>(len);
      if (pos < s.size() && s[pos] == '\n') ++pos;
    }
    decompress_record(r, c.problems);
    c.records.push_back(std::move(r));
  }
  return c;
}

}  // namespace isolab
