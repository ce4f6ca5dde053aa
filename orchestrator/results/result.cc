#include "results/result.h"

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "results/lenient.h"
#include "results/result_file.h"

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

// ---- one field, read (from its JSON type) and written, chosen by the member's type

void read_value(const json& v, const std::string& p, std::string& out) { out = as_string(v, p); }
void read_value(const json& v, const std::string& p, std::int64_t& out) { out = as_integer(v, p); }
void read_value(const json& v, const std::string& p, bool& out) { out = as_bool(v, p); }
void read_value(const json& v, const std::string& p, json& out) { out = as_json(v, p); }
void read_value(const json& v, const std::string& p, Nullable<bool>& out) {
  out = as_nullable_bool(v, p);
}
void read_value(const json& v, const std::string& p, CellStatus& out) {
  out = as_cell_status(v, p);
}
void read_value(const json& v, const std::string& p, Nullable<FailureClass>& out) {
  out = as_failure_class(v, p);
}
void read_value(const json& v, const std::string& p, RunStatus& out) { out = as_run_status(v, p); }
void read_value(const json& v, const std::string& p, std::vector<std::string>& out) {
  out = as_strings(v, p);
}

json nullable_json(const Nullable<bool>& b) { return b ? json(*b) : json(nullptr); }
json nullable_json(const Nullable<FailureClass>& c) {
  return c ? json(std::string(to_string(*c))) : json(nullptr);
}

template <typename T>
json write_value(const T& v) {
  return json(v);
}
json write_value(const Nullable<bool>& v) { return nullable_json(v); }
json write_value(const Nullable<FailureClass>& v) { return nullable_json(v); }
json write_value(CellStatus v) { return std::string(to_string(v)); }
json write_value(RunStatus v) { return std::string(to_string(v)); }

// The typed fields of each record, in one list that the reader and the writer both walk:
// f(key, member) or, for a JSON field that must be an object or null, f(key, member, what).
template <typename Cell, typename F>
void cell_fields(Cell& c, F&& f) {
  f("id", c.id);
  f("variant", c.variant);
  f("repetition", c.repetition);
  f("warmup", c.warmup);
  f("attempt", c.attempt);
  f("status", c.status);
  f("failure_class", c.failure_class);
  f("reason", c.reason);
  f("accelerator", c.accelerator);
  f("raw_dir", c.raw_dir);
  f("overcommitted", c.overcommitted);
  f("block", c.block);
  f("metrics", c.metrics, "metrics");
  f("histograms", c.histograms, "histograms");
}

template <typename Variant, typename F>
void variant_fields(Variant& v, F&& f) {
  f("kernel_release", v.kernel_release);
  f("build_key", v.build_key);
  f("config_sha256", v.config_sha256);
  f("build_error", v.build_error);
  f("cmdline", v.cmdline);
  f("patches", v.patches);
  f("build_warnings", v.build_warnings);
  f("touched_files", v.touched_files);
}

// Without "schema_version", "variants" and "cells", which have readers of their own.
template <typename Run, typename F>
void run_fields(Run& r, F&& f) {
  f("run_id", r.run_id);
  f("spec_name", r.spec_name);
  f("spec_sha256", r.spec_sha256);
  f("started_at", r.started_at);
  f("finished_at", r.finished_at);
  f("status", r.status);
  f("spec", r.spec);
  f("host", r.host);
  f("comparison_key", r.comparison_key);
  f("variant_order", r.variant_order);
}

// Moves each listed field present in `rest` into its member; `pointer` is the record's.
struct Reader {
  json& rest;
  const std::string& pointer;
  template <typename T>
  void operator()(const char* key, std::optional<T>& out, const char* object = nullptr) const {
    auto it = rest.find(key);
    if (it == rest.end()) return;
    const std::string p = child(pointer, key);
    if (object && !it->is_null() && !it->is_object())
      throw SpecError(p, std::string(object) + " must be an object");
    read_value(*it, p, out.emplace());
    rest.erase(it);
  }
};

// Sets each present member over `j`.
struct Writer {
  json& j;
  template <typename T>
  void operator()(const char* key, const std::optional<T>& v, const char* = nullptr) const {
    if (v) j[key] = write_value(*v);
  }
};

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
  cell_fields(c, Writer{j});
  return j;
}

json to_json(const VariantRecord& v) {
  json j = v.rest;
  variant_fields(v, Writer{j});
  return j;
}

json to_json(const RunResult& r) {
  json j = r.rest;
  j["schema_version"] = r.schema_version;
  run_fields(r, Writer{j});
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
  cell_fields(c, Reader{c.rest, p});
  return c;
}

VariantRecord variant_from_json(const json& j, const std::string& p) {
  VariantRecord v;
  v.rest = object_of(j, p, "variant");
  variant_fields(v, Reader{v.rest, p});
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
  const std::string top;
  run_fields(r, Reader{r.rest, top});
  read_variants(r.rest, r);
  for (std::size_t i = 0; i < cells->size(); ++i)
    r.cells.push_back(cell_from_json((*cells)[i], "/cells/" + std::to_string(i)));
  return r;
}

RunResult read_result(const std::filesystem::path& file) {
  const json j = read_json_file(file);
  try {
    return result_from_json(j);
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

}  // namespace isolab::results
