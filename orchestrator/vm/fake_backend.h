// A scripted VmBackend for unit tests (the VM counterpart of sys/fake_runner.h): each run()
// takes the next scripted boot, writes its console text and result channel to the VmConfig's
// files, as a guest would have, and returns its outcome. Records every VmConfig it was given.
// Never starts QEMU or libvirt. Header-only.
#pragma once

#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "vm/vm.h"

namespace isolab {

// One record the scripted guest sends on the result channel (guest/channel.h format); the fake
// frames it with the boot's nonce.
struct FakeChannelRecord {
  std::string name;  // [A-Za-z0-9_.-]+
  int rc = 0;
  std::string data;
};

// What one scripted boot leaves behind.
struct FakeBoot {
  std::string console;                     // written to VmConfig::console_log
  std::vector<FakeChannelRecord> records;  // written to VmConfig::result_channel, in order
  bool done = false;                       // then "@@ISOLAB DONE <nonce>"
  // Written to the insn plugin's output when the boot has one (insn_plugin_active).
  std::optional<std::string> insn_counts;
  VmOutcome outcome;  // returned as is
};

// The nonce of the plan in an initramfs: the value of the /init line "NONCE=<nonce>"
// (guest/init_script.h), read from the uncompressed plan archive at the end of the file; "" when
// the file or the line is missing.
inline std::string fake_boot_nonce(const std::filesystem::path& initrd) {
  std::ifstream in(initrd, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\nNONCE=";
  const std::size_t at = bytes.rfind(key);
  if (at == std::string::npos) return "";
  const std::size_t from = at + key.size();
  return bytes.substr(from, bytes.find('\n', from) - from);
}

class FakeVmBackend : public VmBackend {
 public:
  std::vector<VmConfig> calls;  // every run()'s config, in order
  std::deque<FakeBoot> queued;  // the boots still to come; run() throws when it is empty

  VmOutcome run(const VmConfig& cfg) override {
    validate_vm_config(cfg);
    calls.push_back(cfg);
    if (queued.empty()) throw Error("fake vm backend: no boot scripted for " + cfg.name);
    FakeBoot b = std::move(queued.front());
    queued.pop_front();
    write(cfg.console_log, b.console);
    write(cfg.result_channel, channel_bytes(b, fake_boot_nonce(cfg.initrd)));
    if (b.insn_counts && insn_plugin_active(cfg)) write(cfg.insn_plugin->output, *b.insn_counts);
    return b.outcome;
  }
  std::string name() const override { return "fake"; }

 private:
  static std::string channel_bytes(const FakeBoot& b, const std::string& nonce) {
    std::string s;
    for (const auto& r : b.records)
      s += "@@ISOLAB REC " + nonce + " " + r.name + " " + std::to_string(r.rc) + " " +
           std::to_string(r.data.size()) + "\n" + r.data + "\n";
    if (b.done) s += "@@ISOLAB DONE " + nonce + "\n";
    return s;
  }
  static void write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
};

}  // namespace isolab
