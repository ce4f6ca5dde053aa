// Where a libvirt connection keeps things, from its URI alone: the embedded driver's root and
// the per-domain logs. Pure; without libvirt too.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace isolab {

// The prefix of an embedded driver's URI, followed by its root directory.
inline constexpr std::string_view kEmbedUriPrefix = "qemu:///embed?root=";

// The directory holding <domain>.log for uri: <root>/log/qemu for an embed URI, else the
// system daemon's /var/log/libvirt/qemu. Pure.
std::filesystem::path libvirt_domain_log_dir(const std::string& uri);

}  // namespace isolab
