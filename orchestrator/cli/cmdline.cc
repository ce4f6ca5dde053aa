#include "cli/cmdline.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/common.h"
#include "cmdline/analysis_output.h"
#include "cmdline/analyze.h"

namespace isolab {

namespace {

// isolab cmdline LINE | -f FILE: the kernel command line analysed.
struct CmdlineCommand {
  std::string text, file, kernel_version;
  unsigned vcpus = 0;
  bool json_output = false;

  void declare(CLI::App& cl) {
    cl.add_option("line", text, "The command line (or dmesg text containing `Command line:`)");
    cl.add_option("-f,--file", file, "Read the command line or dmesg from a file ('-' for stdin)");
    cl.add_option("--vcpus", vcpus, "Override the derived vCPU count");
    cl.add_option("--kernel-version", kernel_version,
                  "The customer's kernel (e.g. 5.4.0-150-generic) when its dmesg is not given: "
                  "isolcpus= parameters that kernel ignored are dropped from the guest's line");
    cl.add_flag("--json", json_output, "JSON output");
  }

  int run() const {
    std::string input = read_input(text, file);
    if (input.empty()) throw isolab::Error("cmdline: give a command line, or --file FILE");
    isolab::AnalyzeOptions ao;
    if (vcpus) ao.vcpus = vcpus;
    if (!kernel_version.empty()) ao.customer_kernel_version = kernel_version;
    isolab::Analysis a = isolab::analyze(input, ao);
    std::cout << (json_output ? isolab::json_text(isolab::to_json(a), 2) + "\n"
                              : isolab::to_text(a));
    return 0;
  }
};
}  // namespace

Action declare_cmdline(CLI::App& sub) { return declare_command<CmdlineCommand>(sub); }

}  // namespace isolab
