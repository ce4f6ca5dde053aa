/*
 * qemu-plugin-api.h: the part of QEMU's TCG plugin ABI that isolab's insn-count plugin uses.
 *
 * Debian 12's qemu-system-x86 (QEMU 7.2) loads plugins but ships no qemu-plugin.h, so the
 * plugin declares what it needs here. These are declarations only, written for isolab against
 * the ABI that QEMU 7.2's include/qemu/qemu-plugin.h defines (plugin API version 1; QEMU is
 * GPL-2.0-or-later); no QEMU text is copied. The symbols are resolved at load time from the
 * QEMU binary that dlopen()s the plugin.
 *
 * Layout notes (they must match QEMU's or the plugin reads garbage):
 *   - qemu_plugin_id_t is a 64-bit unsigned integer;
 *   - qemu_info_t is { const char *target_name; struct { int min, cur; } version;
 *     bool system_emulation; union { struct { int smp_vcpus, max_vcpus; } system; }; },
 *     in that order, with the natural C alignment (QEMU fills it, the plugin only reads it,
 *     and only during qemu_plugin_install);
 *   - the callback flags enum starts at 0 for "no register access";
 *   - the inline operation enum starts at 0 for "add a 64-bit immediate".
 */
#ifndef ISOLAB_QEMU_PLUGIN_API_H
#define ISOLAB_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISOLAB_QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The API version this plugin is written for; QEMU refuses a plugin whose exported
 * qemu_plugin_version lies outside [info->version.min, info->version.cur]. */
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
  const char* target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;

enum qemu_plugin_cb_flags {
  QEMU_PLUGIN_CB_NO_REGS = 0,
  QEMU_PLUGIN_CB_R_REGS = 1,
  QEMU_PLUGIN_CB_RW_REGS = 2,
};

/* The inline operations (only an add to a 64-bit counter in API version 1). */
enum qemu_plugin_op {
  QEMU_PLUGIN_INLINE_ADD_U64 = 0,
};

struct qemu_plugin_tb;   /* opaque: one translation block, valid during the translation cb */
struct qemu_plugin_insn; /* opaque: one instruction of such a block */

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);

/* Exported by the plugin. */
extern ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_version;
ISOLAB_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                  int argc, char** argv);

/* Provided by QEMU. */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb* tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op,
                                              void* ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
/* Unregisters every callback of the plugin and flushes the translation cache, asynchronously:
 * the work runs on the calling vCPU before it executes another block, with every other vCPU
 * stopped, and calls cb there (after the flush). A request while one is pending is dropped. */
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
const void* qemu_plugin_insn_data(const struct qemu_plugin_insn* insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn* insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);

#endif /* ISOLAB_QEMU_PLUGIN_API_H */
