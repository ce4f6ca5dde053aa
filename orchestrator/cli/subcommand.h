// How a subcommand of isolab's command line is declared: each cli/<subcommand>.h offers
// declare_<subcommand>(sub), which declares the subcommand's options on `sub` (CLI11) and returns
// the action that runs it with the parsed values; main.cc lists them in `isolab --help` order.
// Header-only.
#pragma once

#include <functional>
#include <memory>

namespace CLI {
class App;
}

namespace isolab {

// What a parsed subcommand runs: returns the process exit status; may throw isolab::Error.
using Action = std::function<int()>;

// Declares Command's options on `sub` (Command::declare); the returned action runs
// Command::run() with the parsed values.
template <class Command>
Action declare_command(CLI::App& sub) {
  auto command = std::make_shared<Command>();
  command->declare(sub);
  return [command] { return command->run(); };
}

}  // namespace isolab
