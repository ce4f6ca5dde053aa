// base/json_document.h: one JSON document from untrusted text, refused by line and column when
// it nests too deep, repeats a key or is not JSON, never quoting more than 80 bytes of it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "base/json_document.h"

using namespace isolab;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_json_document(text, "in.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST(JsonDocument, NestingDeeperThanTheLimitIsRefusedWhereItGoesTooDeep) {
  EXPECT_NO_THROW((void)parse_json_document(nested(kMaxJsonDepth), "in.json"));
  EXPECT_EQ(error_of("{\"a\":\n  " + nested(kMaxJsonDepth)),
            "in.json: nested deeper than 512 at line 2 column 514");
  // 150 000 deep (300 KB): nlohmann would build it, and its first copy would overflow the stack.
  EXPECT_THAT(error_of(nested(150000)), HasSubstr("nested deeper than 512 at line 1 column 513"));
}

TEST(JsonDocument, BracketsInsideStringsAreNotNesting) {
  const std::string quoted = "\"" + std::string(1000, '[') + "\\\"{\"";
  EXPECT_NO_THROW((void)parse_json_document("[" + quoted + "]", "in.json"));
}

TEST(JsonDocument, SyntaxErrorsNameLineAndColumnAndQuoteAtMost80Bytes) {
  EXPECT_THAT(error_of("{\n  \"a\": 1,,\n}"),
              HasSubstr("in.json: not valid JSON at line 2 column 10 (byte 12): syntax error"));
  const std::string cut = error_of("{\"name\": \"" + std::string(100000, 'x'));
  EXPECT_THAT(cut, HasSubstr("at line 1 column 100011"));
  EXPECT_THAT(cut, HasSubstr("missing closing quote"));
  EXPECT_THAT(cut, Not(HasSubstr(std::string(81, 'x'))));
  EXPECT_LT(cut.size(), 300u);
}

// A number no double holds is no syntax error to nlohmann (out_of_range 406, without a byte):
// it is still named by line and column, at the number's last byte.
TEST(JsonDocument, ANumberNoDoubleHoldsIsNamedByLineAndColumn) {
  EXPECT_EQ(error_of("{\n  \"seconds\": 1e999\n}"),
            "in.json: not valid JSON at line 2 column 18 (byte 20): "
            "[json.exception.out_of_range.406] number overflow parsing '1e999'");
}

TEST(JsonDocument, AFileIsReadWithinItsLimit) {
  const fs::path dir = fs::path(::testing::TempDir()) / "json-document";
  fs::create_directories(dir);
  std::ofstream(dir / "ok.json") << "{\"a\": [1, 2]}";
  EXPECT_EQ(read_json_document(dir / "ok.json", 1u << 20)["a"][1], 2);
  EXPECT_THAT(error_of(std::string("[1, 1e400]")), HasSubstr("in.json: not valid JSON"));
}

TEST(JsonDocument, AKeyGivenTwiceInOneObjectIsRefusedByPointerAndLine) {
  EXPECT_EQ(error_of("{\"guest\": {\n  \"vcpus\": 2,\n  \"vcpus\": 8}}"),
            "in.json: duplicate key 'vcpus' at /guest/vcpus (line 3 column 3)");
  EXPECT_THAT(error_of("{\"w\": [{}, {\"a/b\": 1, \"a\\u002fb\": 2}]}"),
              HasSubstr("duplicate key 'a/b' at /w/1/a~1b (line 1 column 23)"));
  // The same key in sibling objects, and a value equal to a key, are no duplicates.
  EXPECT_NO_THROW((void)parse_json_document(
      R"({"v": [{"name": "a"}, {"name": "b"}], "name": "name", "x": {"name": 1}})", "in.json"));
}
