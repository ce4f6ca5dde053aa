// Kubernetes objects in YAML (a must-gather's resource files, a PerformanceProfile given alone),
// read with yaml-cpp into JSON values that remember the line each value was on.
//
// Contract:
//  - A text may hold several documents ("---"); a document of `kind: List` (or `*List`, as
//    `oc get -o yaml` writes) stands for its `items`. Every object must be a mapping with a
//    string `kind`.
//  - Scalars become JSON strings as written (`count: 128` is "128", `enabled: false` is "false":
//    the readers convert what they use, and name the field when it does not convert); a YAML
//    null (`~`, `null`, nothing) is JSON null. Mappings become objects, sequences arrays.
//  - Errors (isolab::Error): YAML that does not parse ("FILE:LINE:COL: YAML: <yaml-cpp's
//    message>"), a document that is not a Kubernetes object ("FILE:LINE: ... has no kind"),
//    anchors/aliases are resolved by yaml-cpp; a text over 64 MiB is refused.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct KubeObject {
  std::string file;  // where it was read, for messages and origins
  nlohmann::json value;
  std::map<std::string, size_t> lines;  // JSON pointer ("/spec/cpu/isolated") -> 1-based line

  std::string kind() const;
  std::string name() const;  // metadata.name, "" when absent
  // The value at a JSON pointer, or nullptr when absent.
  const nlohmann::json* at(const std::string& pointer) const;
  // A string field at a pointer, or nullopt when absent or null; isolab::Error naming the
  // file, line and field when it is not a scalar.
  std::optional<std::string> text_at(const std::string& pointer) const;
  // 1-based line of the value at a pointer (the nearest enclosing value's when absent).
  size_t line_of(const std::string& pointer) const;
  // "FILE:LINE: FIELD" for messages about a field.
  std::string where(const std::string& pointer) const;
};

std::vector<KubeObject> load_kube_objects(std::string_view text, const std::string& file);

}  // namespace isolab
