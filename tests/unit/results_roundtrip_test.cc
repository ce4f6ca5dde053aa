// results/result.h: captured real result.json documents read into the typed model and written
// back give the same JSON; older documents without "schema_version" read and get it added; bad
// fields are refused with their JSON pointer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "results/result.h"

using namespace isolab;
using namespace isolab::results;
using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

fs::path data(const std::string& rel) { return fs::path(ISOLAB_TEST_DATA_DIR) / rel; }

json load(const std::string& rel) { return json::parse(read_file(data(rel))); }

const char* const kCaptured[] = {
    "runs/planted-regression-kqin12/result.json",
    "compare/s2-before/result.json",
    "compare/s2-after/result.json",
    "compare/s2-one-run.json",
};

std::string failure_message(const json& doc) {
  try {
    result_from_json(doc);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ResultsRoundTrip, CapturedDocumentsWriteBackIdentical) {
  for (const char* rel : kCaptured) {
    SCOPED_TRACE(rel);
    const json original = load(rel);
    const RunResult r = result_from_json(original);
    EXPECT_EQ(to_json(r), original);
    EXPECT_EQ(json_text(to_json(r), 2), json_text(original, 2));
  }
}

TEST(ResultsRoundTrip, RunDocumentIsByteIdenticalAsIsolabWroteIt) {
  // `isolab run` wrote this file with two-space indentation and a final newline.
  const std::string text = read_file(data(kCaptured[0]));
  const RunResult r = result_from_json(json::parse(text));
  EXPECT_EQ(json_text(to_json(r), 2) + "\n", text);
}

TEST(ResultsRoundTrip, DocumentWithoutSchemaVersionGetsItAdded) {
  for (const char* rel : kCaptured) {
    SCOPED_TRACE(rel);
    json older = load(rel);
    older.erase("schema_version");
    const json written = to_json(result_from_json(older));
    json expected = older;
    expected["schema_version"] = kSchemaVersion;
    EXPECT_EQ(written, expected);
  }
}

TEST(ResultsRoundTrip, TypedFieldsOfThePlantedRun) {
  const RunResult r = result_from_json(load(kCaptured[0]));
  EXPECT_EQ(r.status, RunStatus::partial);  // planted-r1 failed
  EXPECT_EQ(r.variant_names(), (std::vector<std::string>{"vanilla", "planted"}));
  ASSERT_NE(r.variant("planted"), nullptr);
  EXPECT_FALSE(r.variant("planted")->kernel_release.value_or("").empty());
  std::size_t failed = 0;
  for (const auto& c : r.cells) {
    ASSERT_TRUE(c.status.has_value());
    if (*c.status != CellStatus::failed) continue;
    ++failed;
    EXPECT_EQ(c.failure_class_name(), "rcu_stall");
    EXPECT_EQ(c.id, "planted-r1");
  }
  EXPECT_EQ(failed, 1u);
}

TEST(ResultsRoundTrip, NameTablesRoundTrip) {
  for (auto s : {CellStatus::ok, CellStatus::invalid, CellStatus::failed})
    EXPECT_EQ(cell_status_from_string(to_string(s)), s);
  for (auto c : {FailureClass::build, FailureClass::boot, FailureClass::panic, FailureClass::oops,
                 FailureClass::warning, FailureClass::rcu_stall, FailureClass::lockup,
                 FailureClass::infrastructure, FailureClass::configuration, FailureClass::workload,
                 FailureClass::timeout, FailureClass::host_lost})
    EXPECT_EQ(failure_class_from_string(to_string(c)), c);
  for (auto s : {RunStatus::running, RunStatus::interrupted, RunStatus::failed, RunStatus::partial,
                 RunStatus::complete})
    EXPECT_EQ(run_status_from_string(to_string(s)), s);
  EXPECT_EQ(cell_status_from_string("passed"), std::nullopt);
  EXPECT_EQ(failure_class_from_string("hung_task"), std::nullopt);
}

TEST(ResultsRoundTrip, BadFieldsNameTheirPointer) {
  json doc = load(kCaptured[0]);
  doc["cells"][2]["status"] = "passed";
  EXPECT_THAT(failure_message(doc),
              HasSubstr("/cells/2/status: cell status must be ok, invalid or failed, got passed"));
  doc = load(kCaptured[0]);
  doc["cells"][0]["failure_class"] = "meltdown";
  EXPECT_THAT(failure_message(doc), HasSubstr("/cells/0/failure_class: failure class must be"));
  doc = load(kCaptured[0]);
  doc["schema_version"] = 2;
  EXPECT_THAT(failure_message(doc), HasSubstr("/schema_version: unsupported"));
  doc = load(kCaptured[0]);
  doc.erase("cells");
  EXPECT_THAT(failure_message(doc), HasSubstr("/cells: result.json must have a cells array"));
  doc = load(kCaptured[0]);
  doc["cells"][1]["warmup"] = "no";
  EXPECT_THAT(failure_message(doc), HasSubstr("/cells/1/warmup: must be true or false"));
}
