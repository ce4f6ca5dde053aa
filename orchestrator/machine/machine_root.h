// A folder of a dump that mirrors a machine's own paths (proc/, sys/, etc/ and, in a sos
// report, sos_commands/): a sos report's top, the sysinfo.tgz of a must-gather, a copy made by
// hand. Header-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "machine/dump_tree.h"

namespace isolab {

struct MachineRoot {
  const DumpTree* tree = nullptr;
  std::string prefix;  // the folder in the tree: "" or ending in '/'
  std::string label;   // how origins name its files: "" or "nodes/n/sysinfo.tgz:"

  std::optional<std::string> read(std::string_view rel) const {
    return tree->read(prefix + std::string(rel));
  }
  bool is_dir(std::string_view rel) const { return tree->is_dir(prefix + std::string(rel)); }
  std::vector<std::string> children(std::string_view rel) const {
    return tree->children(prefix + std::string(rel));
  }
  // The file as origins name it: relative to the folder (a sos report's own top, below the
  // folder its tarball wraps it in), after the label.
  std::string file(std::string_view rel) const { return label + std::string(rel); }
};

}  // namespace isolab
