/* A QEMU TCG plugin that QEMU must refuse before installing it: built with
 * -DDECLARED_VERSION=99 it declares an API version no QEMU 7.2 offers; without it, it
 * declares none (QEMU requires the qemu_plugin_version symbol). Used by the insn-count
 * plugin preflight's process tests. */
#include <stdint.h>

#ifdef DECLARED_VERSION
__attribute__((visibility("default"))) int qemu_plugin_version = DECLARED_VERSION;
#endif

__attribute__((visibility("default"))) int qemu_plugin_install(uint64_t id, const void* info,
                                                               int argc, char** argv) {
  (void)id;
  (void)info;
  (void)argc;
  (void)argv;
  return 0;
}
