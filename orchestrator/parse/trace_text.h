// What every reader of ftrace's text output in this area shares (parse/trace.cc,
// parse/lock_contention.cc): bounds on untrusted guest text, the helpers that read words of a
// line, and the "#" comment lines. Not a public API of the area.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace isolab::trace_text {

inline constexpr std::size_t kMaxNameBytes = 64;   // names kept from the guest (clean_name)
inline constexpr std::size_t kMaxOpenPerKey = 16;  // open entries per key before the oldest goes
inline constexpr int kMaxCpu = 8191;
// The event name of the line before a kernel stack (kernel/trace/trace_output.c).
inline constexpr std::string_view kStackHeader = "<stack trace>";

bool is_space(char c);  // ' ' or '\t'

// Without leading spaces and tabs, and without trailing ones or a '\r'.
std::string_view trim_blanks(std::string_view s);

// A whole-token decimal integer (std::from_chars); nullopt on anything else.
std::optional<long long> to_ll(std::string_view s);

// Printable ASCII, at most kMaxNameBytes (others become '?'): names from the guest end up in
// result.json.
std::string clean_name(std::string_view s);

// "CPU:5 [LOST 123 EVENTS]" (kernel/trace/trace.c print_trace_line()).
bool is_lost_line(std::string_view line);

// " => rmqueue_bulk+0x1a/0x40" (kernel/trace/trace_output.c trace_stack_print()): the function
// name, "" when the line is no frame.
std::string_view stack_frame(std::string_view line);

// What the "#" lines say: our "# cpu N" headers (first-seen order, no repeats, N in
// 0..kMaxCpu) and whether "# entries-in-buffer/entries-written: A/B" had A < B (events lost).
struct TraceHeaders {
  std::vector<int> cpus;
  std::set<int> seen;
  bool lost_events = false;
};

// Reads one line that starts with '#' into h; other comments are ignored.
void read_comment(TraceHeaders& h, std::string_view line);

}  // namespace isolab::trace_text
