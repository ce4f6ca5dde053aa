// How many bytes a running process tree has read and written so far, for progress of commands
// that print none (tar -x, git add, git worktree add). From /proc/<pid>/io ("rchar", "wchar":
// bytes passed to read()/write() and friends, page cache or not; Documentation/filesystems/
// proc.rst) of the process and of its live descendants (/proc/<pid>/task/<tid>/children, which
// needs CONFIG_PROC_CHILDREN). Descendants that already exited are not counted.
#pragma once

#include <cstdint>

namespace isolab {

struct ProcIo {
  std::uint64_t rchar = 0;
  std::uint64_t wchar = 0;
};

// rchar and wchar of pid alone; zeros when it is gone or unreadable. Never throws.
ProcIo process_io(int pid);

// Sums rchar and wchar over pid and its live descendants (at most 256 processes). A process
// that is gone or unreadable counts 0; never throws.
ProcIo process_tree_io(int pid);

}  // namespace isolab
