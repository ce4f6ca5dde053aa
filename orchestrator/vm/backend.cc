#include "vm/backend.h"

#include "base/error.h"

namespace isolab {

std::unique_ptr<VmBackend> make_backend(const std::string& name, ProcessRunner& runner) {
  if (name == "qemu") return std::make_unique<QemuBackend>(runner);
  if (name == "libvirt") return std::make_unique<LibvirtBackend>();
  throw Error("vm backend: expected qemu or libvirt, got '" + name + "'");
}

}  // namespace isolab
