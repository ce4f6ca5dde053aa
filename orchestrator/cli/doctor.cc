#include "cli/doctor.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/common.h"
#include "pipeline/doctor.h"
#include "pipeline/host_cpu_plan.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// isolab doctor [SPEC]: what this host can do, and the host CPU plan of a spec's guest; exit 1
// when that plan is REFUSED (the run would refuse the spec on this host), 0 otherwise.
// isolab doctor --insn-plugin: only the instruction-counting plugin's preflight; exit 1 when
// QEMU refuses the plugin or it counts wrong (scripts/setup.sh runs this after the build).
struct DoctorCommand {
  bool json_output = false;
  bool insn_plugin_only = false;
  std::string spec_path, parallel;

  void declare(CLI::App& doc) {
    doc.add_flag("--json", json_output, "Machine-readable output");
    doc.add_option("spec", spec_path,
                   "Also print the host CPU plan for this spec's guest (which host CPUs each "
                   "guest's vCPUs and QEMU threads get, how many guests at once); exit 1 when "
                   "the plan is REFUSED");
    doc.add_option("--parallel", parallel, "With a spec: N or auto, as for `run`");
    doc.add_flag("--insn-plugin", insn_plugin_only,
                 "Only boot the QEMU instruction-counting plugin's test guest; exit 1 when QEMU "
                 "refuses the plugin or its counts are wrong");
  }

  int run() const {
    auto runner = isolab::make_real_runner();
    const isolab::InsnPluginFiles plugin = isolab::find_insn_plugin_files(self_dir());
    if (insn_plugin_only) return run_insn_plugin(*runner, plugin);
    json facts =
        isolab::doctor(*runner, beside_isolab("ISOLAB_VMSTAT_OVERHEAD", "vmstat-overhead"), plugin);
    std::string plan_text = spec_path.empty() ? "" : add_host_plan(facts);
    std::cout << (json_output ? isolab::json_text(facts, 2) + "\n"
                              : isolab::doctor_text(facts) + plan_text);
    const bool refused = facts.contains("host_plan") && !facts["host_plan"].value("ok", true);
    return refused ? 1 : 0;
  }

  int run_insn_plugin(isolab::ProcessRunner& runner, const isolab::InsnPluginFiles& plugin) const {
    const fs::path work =
        fs::temp_directory_path() / ("isolab-insn-preflight-" + std::to_string(::getpid()));
    json facts;
    facts["insn_plugin"] = isolab::insn_plugin_facts(runner, plugin, work);
    std::error_code ec;
    fs::remove_all(work, ec);
    std::cout << (json_output ? isolab::json_text(facts, 2) + "\n"
                              : isolab::insn_plugin_text(facts["insn_plugin"]));
    return facts["insn_plugin"].value("ok", false) ? 0 : 1;
  }

  // Writes the spec's host CPU plan into facts["host_plan"]; returns it as text.
  std::string add_host_plan(json& facts) const {
    isolab::Spec spec = isolab::load_spec_file(spec_path);
    isolab::GuestDerivation g = isolab::derive_guest(spec);
    isolab::HostTopology host = isolab::read_host_topology();
    isolab::GuestCpuNeeds needs = isolab::guest_cpu_needs(spec, g, parse_parallel(parallel));
    isolab::HostPlan plan = isolab::plan_host(host, needs);
    facts["host_plan"] = isolab::to_json(plan);
    facts["host_plan"]["topology"] = isolab::to_json(host);
    return isolab::host_plan_text(host, needs, plan);
  }
};
}  // namespace

Action declare_doctor(CLI::App& sub) { return declare_command<DoctorCommand>(sub); }

}  // namespace isolab
