// Facts from the Kubernetes objects of an OpenShift cluster (a must-gather's resources, or a
// YAML file given alone): the Node, the PerformanceProfile, the Tuned object.
//
//  - Node (v1): status.nodeInfo.kernelVersion is the node's kernel release (the kubelet's
//    uname); metadata.labels select the PerformanceProfile (spec.nodeSelector).
//  - PerformanceProfile: rendered by machine/performance_profile.h. Its line is `cmdline` when
//    no line of the node is given, else `rendered_cmdline`, and compare_rendered() then notes
//    each isolation parameter the two lines set differently. Its CPUs give `cpus` (reserved,
//    isolated, shared and offlined together: the operator asks them to cover the node's CPUs)
//    and `online` (without offlined); spec.cpu.isolated is TuneD's isolated_cores.
//  - Tuned (tuned.openshift.io/v1): the TuneD profile the operator wrote for the node, its
//    spec.profile[] entry named by spec.recommend (the lowest priority value), whose `data` is
//    a tuned.conf: [main] include=, [variables] (isolated_cores=), [sysctl].
// Errors: isolab::Error naming the file, line and field of a value that does not read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "machine/facts.h"
#include "machine/kube_yaml.h"
#include "machine/performance_profile.h"

namespace isolab {

// The kernel release of a Node object.
void add_node_object(const KubeObject& node, MachineFacts& m);
std::map<std::string, std::string> node_labels(const KubeObject& node);

// Whether the profile's nodeSelector selects a node with these labels.
bool selects(const PerformanceProfile& p, const std::map<std::string, std::string>& labels);

void add_performance_profile(const PerformanceProfile& p, MachineFacts& m);
void add_tuned_object(const KubeObject& tuned, MachineFacts& m);

// The Tuned object the profile's status names ("namespace/name"), else
// "openshift-node-performance-<profile>".
std::string tuned_name_of(const KubeObject& profile);

// Notes of the isolation parameters (isolcpus, nohz_full, rcu_nocbs, irqaffinity, nohz,
// tuned.non_isolcpus, systemd.cpu_affinity) the rendered line and the node's line set
// differently; nothing when either line is missing.
void compare_rendered(MachineFacts& m);

}  // namespace isolab
