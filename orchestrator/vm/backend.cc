#include "vm/backend.h"

#include "base/error.h"

namespace isolab {

std::unique_ptr<VmBackend> make_backend(const std::string& name, ProcessRunner& runner,
                                        const std::string& libvirt_uri) {
  if (name == "qemu") return std::make_unique<QemuBackend>(runner);
  if (name == "libvirt") {
    if (libvirt_uri.empty()) throw Error("vm backend libvirt: no connection URI given");
    return std::make_unique<LibvirtBackend>(libvirt_uri);
  }
  throw Error("vm backend: expected qemu or libvirt, got '" + name + "'");
}

}  // namespace isolab
