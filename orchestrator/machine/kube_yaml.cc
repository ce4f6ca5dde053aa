#include "machine/kube_yaml.h"

#include <yaml-cpp/yaml.h>

#include "base/error.h"
#include "base/json_text.h"

namespace isolab {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxYamlBytes = size_t{64} << 20;

size_t line_of_node(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line < 0 ? 0 : static_cast<size_t>(m.line) + 1;
}

json convert(const YAML::Node& n, const std::string& pointer, std::map<std::string, size_t>& lines,
             const std::string& file) {
  lines[pointer] = line_of_node(n);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return n.Scalar();
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (size_t i = 0; i < n.size(); ++i)
        arr.push_back(convert(n[i], pointer + "/" + std::to_string(i), lines, file));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw Error(file + ":" + std::to_string(line_of_node(kv.first)) +
                      ": a mapping key that is not a scalar");
        const std::string key = kv.first.Scalar();
        obj[key] = convert(kv.second, pointer + "/" + json_pointer_token(key), lines, file);
      }
      return obj;
    }
  }
  return nullptr;
}

// The object, or the items of a List, with their lines re-rooted at the item.
void add_objects(KubeObject doc, std::vector<KubeObject>& out) {
  const std::string kind = doc.kind();
  if (kind.empty())
    throw Error(doc.file + ":" + std::to_string(doc.line_of("")) +
                ": a YAML document that is not a Kubernetes object (it has no kind)");
  if (kind != "List" && !(kind.size() > 4 && kind.substr(kind.size() - 4) == "List")) {
    out.push_back(std::move(doc));
    return;
  }
  const json* items = doc.at("/items");
  if (!items || !items->is_array()) return;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string prefix = "/items/" + std::to_string(i);
    KubeObject item{doc.file, (*items)[i], {}};
    for (const auto& [p, line] : doc.lines)
      if (p.rfind(prefix, 0) == 0 && (p.size() == prefix.size() || p[prefix.size()] == '/'))
        item.lines[p.substr(prefix.size())] = line;
    add_objects(std::move(item), out);
  }
}

}  // namespace

std::string KubeObject::kind() const {
  const auto it = value.is_object() ? value.find("kind") : value.end();
  return it != value.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string KubeObject::name() const { return text_at("/metadata/name").value_or(""); }

const json* KubeObject::at(const std::string& pointer) const {
  try {
    const json::json_pointer p(pointer);
    return value.contains(p) ? &value.at(p) : nullptr;
  } catch (const json::exception&) {
    return nullptr;  // a token that names no member or index of this document
  }
}

std::optional<std::string> KubeObject::text_at(const std::string& pointer) const {
  const json* v = at(pointer);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string()) throw Error(where(pointer) + ": expected a value, not a list or mapping");
  return v->get<std::string>();
}

size_t KubeObject::line_of(const std::string& pointer) const {
  std::string p = pointer;
  for (;;) {
    if (const auto it = lines.find(p); it != lines.end()) return it->second;
    if (p.empty()) return 0;
    p = p.substr(0, p.rfind('/'));
  }
}

std::string KubeObject::where(const std::string& pointer) const {
  std::string field = pointer.empty() ? std::string("(document)") : pointer.substr(1);
  for (char& c : field)
    if (c == '/') c = '.';
  return file + ":" + std::to_string(line_of(pointer)) + ": " + field;
}

std::vector<KubeObject> load_kube_objects(std::string_view text, const std::string& file) {
  if (text.size() > kMaxYamlBytes)
    throw Error(file + ": " + std::to_string(text.size()) + " bytes of YAML; at most 64 MiB");
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": YAML: " + e.msg);
  }
  std::vector<KubeObject> out;
  for (const YAML::Node& d : docs) {
    if (d.IsNull()) continue;
    KubeObject o{file, nullptr, {}};
    o.value = convert(d, "", o.lines, file);
    add_objects(std::move(o), out);
  }
  return out;
}

}  // namespace isolab
