// `isolab machine PATH`: the customer's machine from what the customer hands over.
//
// What PATH may be, told apart by its content (never by its name alone):
//  - a must-gather, as a directory or an archive: a folder holding nodes/ or
//    cluster-scoped-resources/ (machine/must_gather.h); `node` picks the node;
//  - a sos report or any copy of a machine's own paths, as a directory or an archive: a folder
//    holding sos_commands/ (kind "sos report"), or proc/, sys/ or etc/ (kind "machine dump"),
//    at the top or one or two folders below (sosreport-<host>-<date>/);
//  - a YAML file of Kubernetes objects: a PerformanceProfile (rendered,
//    machine/performance_profile.h), a Tuned object, a Node; kind "kubernetes objects";
//  - a TuneD variables file (name=value lines naming isolated_cores= or no_balance_cores=, or a
//    file named *variables.conf); kind "tuned variables";
//  - a file of one command line (/proc/cmdline); kind "command line".
// `cmdline_file` is a /proc/cmdline to read with a file that holds no line (a profile or a
// variables file given alone); with one that holds a line it is an error, naming both.
// The origins of a single file's facts name the file by its base name; a dump's, by the path
// inside the dump. Errors (isolab::Error) name PATH, and the file and line inside it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "machine/facts.h"

namespace isolab {

struct MachineOptions {
  std::optional<std::string> node;
  std::optional<std::filesystem::path> cmdline_file;
};

MachineFacts read_machine(const std::filesystem::path& path, const MachineOptions& options = {});

}  // namespace isolab
