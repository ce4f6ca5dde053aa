#include "cli/machine.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/json_text.h"
#include "machine/machine.h"

namespace isolab {

namespace {

// isolab machine PATH [--node NAME] [--cmdline FILE] [--json].
struct MachineCommand {
  std::string path, node, cmdline_file;
  bool json_output = false;

  void declare(CLI::App& cl) {
    cl.add_option("path", path,
                  "A sos report or must-gather (directory or tarball), a PerformanceProfile "
                  "YAML, a TuneD variables file, or a /proc/cmdline")
        ->required();
    cl.add_option("--node", node, "The must-gather's node, when it holds several");
    cl.add_option("--cmdline", cmdline_file,
                  "The node's /proc/cmdline, read with a PerformanceProfile or TuneD variables "
                  "file given alone");
    cl.add_flag("--json", json_output, "JSON output (docs/commands.md)");
  }

  int run() const {
    MachineOptions o;
    if (!node.empty()) o.node = node;
    if (!cmdline_file.empty()) o.cmdline_file = cmdline_file;
    const MachineFacts m = read_machine(path, o);
    std::cout << (json_output ? json_text(to_json(m), 2) + "\n" : to_text(m));
    return 0;
  }
};

}  // namespace

Action declare_machine(CLI::App& sub) { return declare_command<MachineCommand>(sub); }

}  // namespace isolab
