#include "machine/machine.h"

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "machine/cpu_files.h"
#include "machine/dump_tree.h"
#include "machine/isolation.h"
#include "machine/kube_facts.h"
#include "machine/machine_dump.h"
#include "machine/must_gather.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxTextBytes = size_t{64} << 20;

// The folder of a tree that mirrors a machine's paths, and its kind; nullopt when none.
std::optional<std::pair<std::string, std::string>> find_machine_root(const DumpTree& t) {
  std::vector<std::string> level = {""};
  for (int depth = 0; depth <= 2 && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& dir : level) {
      if (t.is_dir(dir + "sos_commands")) return std::make_pair(dir, std::string("sos report"));
      for (const char* d : {"proc", "sys", "etc"})
        if (t.is_dir(dir + d)) return std::make_pair(dir, std::string("machine dump"));
      for (const std::string& c : t.children(dir))
        if (t.is_dir(dir + c)) next.push_back(dir + c + "/");
    }
    level = std::move(next);
  }
  return std::nullopt;
}

void read_tree(const fs::path& path, const MachineOptions& o, MachineFacts& m) {
  const DumpTree t = DumpTree::open(path);
  if (const auto mg = find_must_gather(t)) return read_must_gather(t, *mg, o.node, m);
  if (o.node) throw Error(path.string() + ": --node is for a must-gather, and this is none");
  const auto root = find_machine_root(t);
  if (!root)
    throw Error(path.string() +
                ": neither a must-gather (nodes/, cluster-scoped-resources/) nor a sos report "
                "or machine folder (sos_commands/, proc/, sys/, etc/)");
  m.kind = root->second;
  const MachineRoot r{&t, root->first, ""};
  CpuFiles cpu;
  read_machine_root(r, m);
  read_cpu_files(r, cpu);
  cpu_facts(cpu, m);
}

bool is_yaml(std::string_view text) {
  for (std::string_view l : text_lines(text)) {
    const std::string_view t = trim_space(l);
    if (t.empty() || t.front() == '#') continue;
    return t == "---" || t.rfind("apiVersion:", 0) == 0 || t.rfind("kind:", 0) == 0;
  }
  return false;
}

bool is_tuned_variables(std::string_view text, const std::string& name) {
  if (name.ends_with("variables.conf")) return true;
  for (std::string_view l : text_lines(text)) {
    const std::string_view t = trim_space(l);
    if (t.rfind("isolated_cores", 0) == 0 || t.rfind("no_balance_cores", 0) == 0) return true;
  }
  return false;
}

void read_objects_file(std::string_view text, const std::string& name, MachineFacts& m) {
  m.kind = "kubernetes objects";
  std::vector<PerformanceProfile> profiles;
  for (const KubeObject& o : load_kube_objects(text, name)) {
    if (o.kind() == "PerformanceProfile")
      profiles.push_back(read_performance_profile(o));
    else if (o.kind() == "Tuned")
      add_tuned_object(o, m);
    else if (o.kind() == "Node")
      add_node_object(o, m);
    else
      m.notes.push_back(name + ": a " + o.kind() + " object, not read");
  }
  if (profiles.size() > 1)
    throw Error(name + ": " + std::to_string(profiles.size()) +
                " PerformanceProfiles; give one machine's profile");
  if (profiles.size() == 1) {
    m.kind = "performance profile";
    add_performance_profile(profiles.front(), m);
    compare_rendered(m);
  }
}

void read_text_file(const fs::path& path, std::string_view text, MachineFacts& m) {
  const std::string name = path.filename().string();
  if (is_yaml(text)) return read_objects_file(text, name, m);
  if (is_tuned_variables(text, name)) {
    m.kind = "tuned variables";
    return add_tuned_variables(text, name, m);
  }
  if (m.cmdline) throw Error(path.string() + ": a command line, and --cmdline gives another");
  m.kind = "command line";
  m.cmdline = Fact<std::string>{proc_cmdline_line(text, name), {{name, 1, ""}}};
}

void read_input(const fs::path& path, const MachineOptions& o, MachineFacts& m) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw Error(path.string() + ": no such file or directory");
  const bool tree = fs::is_directory(st) || looks_like_archive(read_file(path, 512));
  if (tree && o.cmdline_file)
    throw Error(path.string() +
                ": --cmdline is for a PerformanceProfile or TuneD variables file given alone; a "
                "dump brings its own command line");
  if (tree) return read_tree(path, o, m);
  if (o.node) throw Error(path.string() + ": --node is for a must-gather, and this is none");
  const std::string text = read_file(path, kMaxTextBytes + 1);
  if (text.size() > kMaxTextBytes)
    throw Error(path.string() + ": over 64 MiB; not a profile, variables file or command line");
  read_text_file(path, text, m);
}

}  // namespace

MachineFacts read_machine(const fs::path& path, const MachineOptions& o) {
  MachineFacts m;
  m.input = path.string();
  if (o.cmdline_file) {
    const std::string name = o.cmdline_file->filename().string();
    m.cmdline = Fact<std::string>{
        proc_cmdline_line(read_file(*o.cmdline_file, kMaxTextBytes), o.cmdline_file->string()),
        {{name, 1, "--cmdline"}}};
  }
  try {
    read_input(path, o, m);
    derive_isolation(m);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path.string(), 0) == 0) throw;
    throw Error(path.string() + ": " + msg);
  }
  return m;
}

}  // namespace isolab
