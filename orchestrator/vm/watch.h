// Progress watching shared by the VM backends: the console log's size is the only sign of life
// a backend reads (it never interprets the console), and the three timeouts are decided here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "vm/vm.h"

namespace isolab {

// Times in seconds since the VM was started.
struct ConsoleProgress {
  double first_output = -1;  // first time the console was seen non-empty; -1 = not yet
  double last_growth = 0;    // last time its size grew (0 before any output)
  std::uintmax_t size = 0;   // last seen size in bytes
};

// Records the console size seen at time now (a missing file counts as size 0).
void observe_console(ConsoleProgress& p, std::uintmax_t size_now, double now);

// Pure decision: the timeout that has expired at time now, if any. Order of precedence:
// wall_timeout, then boot_timeout (only while there was no output), then silence_timeout
// (only after the first output). A timeout of 0 is disabled.
std::optional<VmOutcome::End> expired_timeout(const VmConfig& cfg, const ConsoleProgress& p,
                                              double now);

// "no console output within 60 s", "console silent for 120 s (last output at 3.2 s)", ...
std::string describe_timeout(VmOutcome::End e, const VmConfig& cfg, const ConsoleProgress& p);

// Size of the file at path, 0 when it does not exist or cannot be stat'ed.
std::uintmax_t file_size_or_zero(const std::filesystem::path& path);

// Removes and recreates (empty) each output file of cfg, creating parent directories, so that
// progress starts from size 0; with insn_plugin_active(cfg) also the plugin's output, mode 0666
// (writable by the user a libvirt driver runs QEMU as). Throws isolab::Error naming the path on
// failure.
void prepare_output_files(const VmConfig& cfg);

// cfg.qemu_log, or console_log + ".qemu.log" when that is empty.
std::filesystem::path effective_qemu_log(const VmConfig& cfg);

}  // namespace isolab
