#include "parse/trace_text.h"

#include <algorithm>
#include <charconv>

namespace isolab::trace_text {

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<long long> to_ll(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string clean_name(std::string_view s) {
  std::string out(s.substr(0, kMaxNameBytes));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

bool is_lost_line(std::string_view line) {
  return line.substr(0, 4) == "CPU:" && line.find(" [LOST ") != std::string_view::npos;
}

std::string_view stack_frame(std::string_view line) {
  if (line.substr(0, 4) != " => ") return {};
  std::string_view f = trim_blanks(line.substr(4));
  return f.substr(0, std::min(f.find('+'), f.size()));
}

void read_comment(TraceHeaders& h, std::string_view line) {
  if (line.substr(0, 6) == "# cpu ") {
    auto n = to_ll(trim_blanks(line.substr(6)));
    if (n && *n >= 0 && *n <= kMaxCpu && h.seen.insert(static_cast<int>(*n)).second)
      h.cpus.push_back(static_cast<int>(*n));
    return;
  }
  std::size_t k = line.find("entries-written: ");
  if (k == std::string_view::npos) return;
  std::string_view rest = line.substr(k + 17);
  rest = rest.substr(0, std::min(rest.find(' '), rest.size()));
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return;
  auto a = to_ll(rest.substr(0, slash)), b = to_ll(rest.substr(slash + 1));
  if (a && b && *a < *b) h.lost_events = true;
}

}  // namespace isolab::trace_text
