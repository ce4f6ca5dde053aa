// Host fingerprint recorded in every result.json (docs/RESULT_SCHEMA.md: "host").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sys/process.h"

namespace isolab {

// {"cpu_model", "nproc", "host_kernel", "qemu_version", "libvirt_version", "compiler",
//  "isolab_revision"}; the accelerator fields are added by the pipeline. Fields that cannot be
// determined are "unknown", never missing. Runs `qemu-system-x86_64 --version`,
// `libvirtd --version`, `gcc --version` and `git rev-parse` through the runner.
nlohmann::json host_fingerprint(ProcessRunner& runner, const std::string& source_dir);

// The fields of "host" that make two hosts' numbers comparable, in the order they are hashed.
inline constexpr const char* kHostFingerprintFields[] = {"cpu_model", "nproc", "host_kernel",
                                                         "qemu_version", "accelerator"};

// SHA-256 over kHostFingerprintFields, each "<field>=<compact JSON, null when absent>\n".
std::string host_fingerprint_sha256(const nlohmann::json& host);

// First line of `<prog> --version` with the version number, or "unknown".
std::string tool_version_line(ProcessRunner& runner, const std::string& prog);

}  // namespace isolab
