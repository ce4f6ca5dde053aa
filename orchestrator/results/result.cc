#include "results/result.h"

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"

using nlohmann::json;

namespace isolab::results {

namespace {

// ---- name tables

template <typename E>
struct Named {
  E value;
  std::string_view name;
};

constexpr Named<CellStatus> kCellStatuses[] = {
    {CellStatus::ok, "ok"}, {CellStatus::invalid, "invalid"}, {CellStatus::failed, "failed"}};

constexpr Named<FailureClass> kFailureClasses[] = {{FailureClass::build, "build"},
                                                   {FailureClass::boot, "boot"},
                                                   {FailureClass::panic, "panic"},
                                                   {FailureClass::oops, "oops"},
                                                   {FailureClass::warning, "warning"},
                                                   {FailureClass::rcu_stall, "rcu_stall"},
                                                   {FailureClass::lockup, "lockup"},
                                                   {FailureClass::infrastructure, "infrastructure"},
                                                   {FailureClass::configuration, "configuration"},
                                                   {FailureClass::workload, "workload"},
                                                   {FailureClass::timeout, "timeout"},
                                                   {FailureClass::host_lost, "host_lost"}};

constexpr Named<RunStatus> kRunStatuses[] = {{RunStatus::running, "running"},
                                             {RunStatus::interrupted, "interrupted"},
                                             {RunStatus::failed, "failed"},
                                             {RunStatus::partial, "partial"},
                                             {RunStatus::complete, "complete"}};

template <typename E, std::size_t N>
std::string_view name_of(const Named<E> (&table)[N], E v) {
  for (const auto& n : table)
    if (n.value == v) return n.name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> value_of(const Named<E> (&table)[N], std::string_view s) {
  for (const auto& n : table)
    if (n.name == s) return n.value;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string names_of(const Named<E> (&table)[N]) {
  std::string out;
  for (const auto& n : table) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

// ---- reading one field

// As compare has always quoted a bad value: strings bare, null as "(absent)".
std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(absent)";
  return json_text(v);
}

std::string child(const std::string& pointer, const std::string& key) {
  return pointer + "/" + json_pointer_token(key);
}

[[noreturn]] void bad(const std::string& pointer, const std::string& what, const json& v) {
  throw SpecError(pointer, what + ", got " + json_text(v));
}

std::string as_string(const json& v, const std::string& p) {
  if (!v.is_string()) bad(p, "must be a string", v);
  return v.get<std::string>();
}

std::int64_t as_integer(const json& v, const std::string& p) {
  if (!v.is_number_integer()) bad(p, "must be an integer", v);
  return v.get<std::int64_t>();
}

bool as_bool(const json& v, const std::string& p) {
  if (!v.is_boolean()) bad(p, "must be true or false", v);
  return v.get<bool>();
}

json as_json(const json& v, const std::string&) { return v; }

// cells[].metrics and cells[].histograms: an object by name, or null.
json as_metrics(const json& v, const std::string& p) {
  if (!v.is_null() && !v.is_object()) throw SpecError(p, "metrics must be an object");
  return v;
}

json as_histograms(const json& v, const std::string& p) {
  if (!v.is_null() && !v.is_object()) throw SpecError(p, "histograms must be an object");
  return v;
}

Nullable<bool> as_nullable_bool(const json& v, const std::string& p) {
  if (v.is_null()) return std::nullopt;
  return as_bool(v, p);
}

CellStatus as_cell_status(const json& v, const std::string& p) {
  const auto s = v.is_string() ? cell_status_from_string(v.get<std::string>()) : std::nullopt;
  if (!s) throw SpecError(p, "cell status must be ok, invalid or failed, got " + value_text(v));
  return *s;
}

Nullable<FailureClass> as_failure_class(const json& v, const std::string& p) {
  if (v.is_null()) return std::nullopt;
  const auto c = v.is_string() ? failure_class_from_string(v.get<std::string>()) : std::nullopt;
  if (!c) bad(p, "failure class must be null or one of " + names_of(kFailureClasses), v);
  return *c;
}

RunStatus as_run_status(const json& v, const std::string& p) {
  const auto s = v.is_string() ? run_status_from_string(v.get<std::string>()) : std::nullopt;
  if (!s) bad(p, "run status must be one of " + names_of(kRunStatuses), v);
  return *s;
}

std::vector<std::string> as_strings(const json& v, const std::string& p) {
  if (!v.is_array()) bad(p, "must be an array of strings", v);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < v.size(); ++k)
    out.push_back(as_string(v[k], child(p, std::to_string(k))));
  return out;
}

// Moves rest[key] out through read(value, pointer) when present.
template <typename T>
void take(json& rest, const char* key, const std::string& pointer, std::optional<T>& out,
          T (*read)(const json&, const std::string&)) {
  auto it = rest.find(key);
  if (it == rest.end()) return;
  out = read(*it, child(pointer, key));
  rest.erase(it);
}

// ---- writing one field

json nullable_json(const Nullable<bool>& b) { return b ? json(*b) : json(nullptr); }
json nullable_json(const Nullable<FailureClass>& c) {
  return c ? json(std::string(to_string(*c))) : json(nullptr);
}

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json object_of(const json& j, const std::string& pointer, const char* what) {
  if (!j.is_object()) throw SpecError(pointer, std::string(what) + " must be an object");
  return j;
}

void read_variants(json& rest, RunResult& r) {
  auto it = rest.find("variants");
  if (it == rest.end()) return;
  if (!it->is_object()) bad("/variants", "must be an object of variants by name", *it);
  r.variants.emplace();
  for (const auto& [name, v] : it->items())
    (*r.variants)[name] = variant_from_json(v, child("/variants", name));
  rest.erase(it);
}

void check_schema_version(const json& j) {
  auto it = j.find("schema_version");
  if (it == j.end()) return;
  if (!it->is_number_integer() || it->get<std::int64_t>() != kSchemaVersion)
    throw SpecError("/schema_version", "unsupported result.json schema_version " + json_text(*it) +
                                           " (this isolab reads 1)");
}

}  // namespace

std::string_view to_string(CellStatus s) { return name_of(kCellStatuses, s); }
std::optional<CellStatus> cell_status_from_string(std::string_view s) {
  return value_of(kCellStatuses, s);
}
std::string_view to_string(FailureClass c) { return name_of(kFailureClasses, c); }
std::optional<FailureClass> failure_class_from_string(std::string_view s) {
  return value_of(kFailureClasses, s);
}
std::string_view to_string(RunStatus s) { return name_of(kRunStatuses, s); }
std::optional<RunStatus> run_status_from_string(std::string_view s) {
  return value_of(kRunStatuses, s);
}

std::string CellRecord::failure_class_name() const {
  return failure_class && *failure_class ? std::string(to_string(**failure_class)) : "";
}

const json& CellRecord::field(const std::string& key) const {
  static const json null;
  auto it = rest.find(key);
  return it == rest.end() ? null : *it;
}

std::vector<std::string> RunResult::variant_names() const {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  if (variant_order)
    for (const auto& v : *variant_order) add(v);
  if (variants)
    for (const auto& [name, v] : *variants) add(name);
  for (const auto& c : cells)
    if (c.variant && !c.variant->empty()) add(*c.variant);
  return names;
}

const VariantRecord* RunResult::variant(const std::string& name) const {
  if (!variants) return nullptr;
  auto it = variants->find(name);
  return it == variants->end() ? nullptr : &it->second;
}

CellRecord unbooted_cell(const std::string& id, const std::string& variant, int repetition,
                         bool warmup, FailureClass failure, const std::string& reason) {
  CellRecord c;
  c.id = id;
  c.variant = variant;
  c.repetition = repetition;
  c.warmup = warmup;
  c.status = CellStatus::failed;
  c.failure_class = failure;
  c.reason = reason;
  c.metrics = json::object();
  return c;
}

json to_json(const CellRecord& c) {
  json j = c.rest;
  put(j, "id", c.id);
  put(j, "variant", c.variant);
  put(j, "repetition", c.repetition);
  put(j, "warmup", c.warmup);
  put(j, "attempt", c.attempt);
  if (c.status) j["status"] = std::string(to_string(*c.status));
  if (c.failure_class) j["failure_class"] = nullable_json(*c.failure_class);
  put(j, "reason", c.reason);
  put(j, "accelerator", c.accelerator);
  put(j, "raw_dir", c.raw_dir);
  if (c.overcommitted) j["overcommitted"] = nullable_json(*c.overcommitted);
  put(j, "block", c.block);
  put(j, "metrics", c.metrics);
  put(j, "histograms", c.histograms);
  return j;
}

json to_json(const VariantRecord& v) {
  json j = v.rest;
  put(j, "kernel_release", v.kernel_release);
  put(j, "build_key", v.build_key);
  put(j, "config_sha256", v.config_sha256);
  put(j, "build_error", v.build_error);
  put(j, "cmdline", v.cmdline);
  put(j, "patches", v.patches);
  put(j, "build_warnings", v.build_warnings);
  put(j, "touched_files", v.touched_files);
  return j;
}

json to_json(const RunResult& r) {
  json j = r.rest;
  j["schema_version"] = r.schema_version;
  put(j, "run_id", r.run_id);
  put(j, "spec_name", r.spec_name);
  put(j, "spec_sha256", r.spec_sha256);
  put(j, "started_at", r.started_at);
  put(j, "finished_at", r.finished_at);
  if (r.status) j["status"] = std::string(to_string(*r.status));
  put(j, "spec", r.spec);
  put(j, "host", r.host);
  put(j, "comparison_key", r.comparison_key);
  put(j, "variant_order", r.variant_order);
  if (r.variants) {
    json vs = json::object();
    for (const auto& [name, v] : *r.variants) vs[name] = to_json(v);
    j["variants"] = std::move(vs);
  }
  json cells = json::array();
  for (const auto& c : r.cells) cells.push_back(to_json(c));
  j["cells"] = std::move(cells);
  return j;
}

void write_result(const std::filesystem::path& file, const RunResult& r, int indent) {
  write_file_atomic(file, json_text(to_json(r), indent) + "\n");
}

CellRecord cell_from_json(const json& j, const std::string& p) {
  CellRecord c;
  c.rest = object_of(j, p, "cell");
  take(c.rest, "id", p, c.id, as_string);
  take(c.rest, "variant", p, c.variant, as_string);
  take(c.rest, "repetition", p, c.repetition, as_integer);
  take(c.rest, "warmup", p, c.warmup, as_bool);
  take(c.rest, "attempt", p, c.attempt, as_integer);
  take(c.rest, "status", p, c.status, as_cell_status);
  take(c.rest, "failure_class", p, c.failure_class, as_failure_class);
  take(c.rest, "reason", p, c.reason, as_string);
  take(c.rest, "accelerator", p, c.accelerator, as_string);
  take(c.rest, "raw_dir", p, c.raw_dir, as_string);
  take(c.rest, "overcommitted", p, c.overcommitted, as_nullable_bool);
  take(c.rest, "block", p, c.block, as_string);
  take(c.rest, "metrics", p, c.metrics, as_metrics);
  take(c.rest, "histograms", p, c.histograms, as_histograms);
  return c;
}

VariantRecord variant_from_json(const json& j, const std::string& p) {
  VariantRecord v;
  v.rest = object_of(j, p, "variant");
  take(v.rest, "kernel_release", p, v.kernel_release, as_string);
  take(v.rest, "build_key", p, v.build_key, as_string);
  take(v.rest, "config_sha256", p, v.config_sha256, as_string);
  take(v.rest, "build_error", p, v.build_error, as_string);
  take(v.rest, "cmdline", p, v.cmdline, as_string);
  take(v.rest, "patches", p, v.patches, as_json);
  take(v.rest, "build_warnings", p, v.build_warnings, as_json);
  take(v.rest, "touched_files", p, v.touched_files, as_json);
  return v;
}

RunResult result_from_json(const json& j) {
  if (!j.is_object()) throw Error("result.json: top level must be an object");
  check_schema_version(j);
  auto cells = j.find("cells");
  if (cells == j.end() || !cells->is_array())
    throw SpecError("/cells", "result.json must have a cells array");
  RunResult r;
  r.rest = j;
  r.rest.erase("schema_version");
  r.rest.erase("cells");
  take(r.rest, "run_id", "", r.run_id, as_string);
  take(r.rest, "spec_name", "", r.spec_name, as_string);
  take(r.rest, "spec_sha256", "", r.spec_sha256, as_string);
  take(r.rest, "started_at", "", r.started_at, as_string);
  take(r.rest, "finished_at", "", r.finished_at, as_string);
  take(r.rest, "status", "", r.status, as_run_status);
  take(r.rest, "spec", "", r.spec, as_json);
  take(r.rest, "host", "", r.host, as_json);
  take(r.rest, "comparison_key", "", r.comparison_key, as_json);
  take(r.rest, "variant_order", "", r.variant_order, as_strings);
  read_variants(r.rest, r);
  for (std::size_t i = 0; i < cells->size(); ++i)
    r.cells.push_back(cell_from_json((*cells)[i], "/cells/" + std::to_string(i)));
  return r;
}

RunResult read_result(const std::filesystem::path& file) {
  json j;
  try {
    j = json::parse(read_file(file));
  } catch (const std::exception& e) {
    throw Error(file.string() + ": " + e.what());
  }
  try {
    return result_from_json(j);
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

}  // namespace isolab::results
