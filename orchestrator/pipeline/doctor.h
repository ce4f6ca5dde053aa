// `isolab doctor`: what this host can do.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "sys/process.h"

namespace isolab {

// {"qemu": {path, version, error}, "kvm": {dev_present, dev_openable, works, cpu_model, reason,
//  probe_seconds, attempts[]}, "libvirt": {reachable, detail}, "compiler", "make", "git",
//  "ccache", "kernel_source": {path, present, bytes}, "guest_tools": {busybox, cyclictest,
//  stress-ng, vmstat-overhead: path or ""}, "cache_dir"}. Runs the real KVM probe (seconds).
nlohmann::json doctor(ProcessRunner& runner, const std::filesystem::path& vmstat_overhead);

// Human-readable rendering, one line per fact, "ok"/"missing"/"no" first.
std::string doctor_text(const nlohmann::json& facts);

}  // namespace isolab
