#include "vm/libvirt_paths.h"

namespace fs = std::filesystem;

namespace isolab {

fs::path libvirt_domain_log_dir(const std::string& uri) {
  if (uri.rfind(kEmbedUriPrefix, 0) == 0) {
    std::string root = uri.substr(kEmbedUriPrefix.size());
    root = root.substr(0, root.find('&'));
    return fs::path(root) / "log" / "qemu";
  }
  return "/var/log/libvirt/qemu";
}

}  // namespace isolab
