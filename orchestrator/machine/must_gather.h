// An OpenShift must-gather of a node (`oc adm must-gather` with the Node Tuning Operator's
// image, which gathers the performance-profile-creator's node data).
//
// Layout (under the folder holding nodes/ or cluster-scoped-resources/, found up to three
// levels below the top, as must-gather.local.N/<image>/ nests it):
//  - nodes/<node>/: proc_cmdline, lscpu (lscpu -e or its summary), irq_affinities.json,
//    cpu_affinities.json (per task: pid, tid, thread, affinity; PID 1's is systemd's CPUs),
//    sysinfo.tgz (a tarball of the node's /proc and /sys files: read as a machine folder,
//    machine/machine_dump.h and cpu_files.h, origins named "nodes/<node>/sysinfo.tgz:PATH").
//  - cluster-scoped-resources/core/nodes/<node>.yaml: the Node object.
//  - cluster-scoped-resources/performance.openshift.io/performanceprofiles/*.yaml: the
//    PerformanceProfiles; the one whose nodeSelector selects the node's labels is read (with
//    no Node object, the only one).
//  - namespaces/<ns>/tuned.openshift.io/tuneds/*.yaml (or tuneds.yaml, a List): the Tuned
//    objects; the one the profile names (kube_facts.h tuned_name_of()) is read.
// The node: `node` when given; else the only folder under nodes/. Errors (isolab::Error): no
// nodes/<node>/ folder; several and no `node` ("holds 3 nodes: a, b, c; choose one with
// --node"); a `node` that is not there (listing those that are); a YAML or JSON file that
// does not read (file and line).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "machine/dump_tree.h"
#include "machine/facts.h"

namespace isolab {

// The must-gather folder of a tree ("" or ending in '/'), or nullopt when the tree is none.
std::optional<std::string> find_must_gather(const DumpTree& t);

// The nodes a must-gather holds data of (the folders under nodes/), sorted.
std::vector<std::string> must_gather_nodes(const DumpTree& t, const std::string& root);

void read_must_gather(const DumpTree& t, const std::string& root,
                      const std::optional<std::string>& node, MachineFacts& m);

}  // namespace isolab
