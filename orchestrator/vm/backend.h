// Choosing a VM backend by name (the spec's / command line's "qemu" or "libvirt").
#pragma once

#include <memory>
#include <string>

#include "sys/process.h"
#include "vm/accel.h"
#include "vm/libvirt.h"
#include "vm/qemu.h"
#include "vm/vm.h"

namespace isolab {

// "qemu" -> QemuBackend over runner (which must outlive the backend); "libvirt" ->
// LibvirtBackend on libvirt_uri (see default_libvirt_uri; empty throws). Anything else throws
// isolab::Error naming the value.
std::unique_ptr<VmBackend> make_backend(const std::string& name, ProcessRunner& runner,
                                        const std::string& libvirt_uri = {});

}  // namespace isolab
