// oslat's --json file into an OslatResult (parse/oslat.h has the format and the result).
#pragma once

#include <string_view>

#include "parse/oslat.h"

namespace isolab {

// Parses an oslat --json file. Quirks handled (docs/sources.md [t3], [t7], [os3]): bare
// nan/-nan/inf become "no value"; a file that is not JSON as written gets its cmdline value
// re-escaped, which repairs a quote, backslash, newline or control byte in an argument: the
// value is the text between the quotes after the "cmdline:" key and before the comma of the
// "rt_test_version:" member that rt_write_json() always writes after it (a note says so;
// invalid UTF-8 in it becomes U+FFFD). A file still not JSON is refused. The command line,
// when readable, gives the bucket width (-W/--bucket-width, default 1000 ns), the bucket count
// (-b/--bucket-size) and so the last bucket, and whether -B shifted the labels; the labels'
// decimals give the unit of min and max, and a command line that contradicts them is an error.
// avg is dropped, with a note, where oslat's calculate() is known wrong: with a sub-µs width
// and any overflow (it adds the overflowed part in ns to a sum in µs). Throws isolab::Error
// naming the line and column of a syntax error, or the field ("thread/1/max") of a wrong type,
// a bad label, a negative number, duplicate CPUs, a num_threads that does not match, no thread,
// a thread with samples whose min or max is out of range (oslat's initial 2^64-1), labels whose
// unit the command line contradicts, or more than 64 MiB.
OslatResult parse_oslat_json(std::string_view text);

}  // namespace isolab
