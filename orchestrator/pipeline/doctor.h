// `isolab doctor`: what this host can do.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "sys/process.h"
#include "vm/insn_plugin.h"

namespace isolab {

// {"qemu": {path, version, error}, "kvm": {dev_present, dev_openable, works, cpu_model, reason,
//  probe_seconds, attempts[]}, "libvirt": {reachable, detail}, "compiler", "make", "git",
//  "ccache", "kernel_source": {path, present, bytes}, "guest_tools": {busybox, cyclictest,
//  stress-ng, vmstat-overhead: path or ""}, "insn_plugin": {plugin, test_guest, ok, error,
//  seconds, plugin_api, qemu_api}, "cache_dir"}. Runs the real KVM probe and the insn-count
//  plugin preflight (preflight_insn_plugin; seconds each).
nlohmann::json doctor(ProcessRunner& runner, const std::filesystem::path& vmstat_overhead,
                      const InsnPluginFiles& insn_plugin);

// The "insn_plugin" object of doctor() alone, from one preflight run under work_dir.
nlohmann::json insn_plugin_facts(ProcessRunner& runner, const InsnPluginFiles& files,
                                 const std::filesystem::path& work_dir);

// Human-readable rendering, one line per fact, "ok"/"missing"/"no" first.
std::string doctor_text(const nlohmann::json& facts);

// The line doctor_text writes for the "insn_plugin" object: "ok       QEMU insn-count plugin:
// <path> (preflight <s> s, QEMU plugin API <min>-<max>)\n" or "FAILED   <error>\n" (the error
// starts with "QEMU insn-count plugin").
std::string insn_plugin_text(const nlohmann::json& insn_plugin);

}  // namespace isolab
