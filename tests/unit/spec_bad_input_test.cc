// load_spec_file on spec files that are not specs: each refused with a message naming the file
// and what is wrong with it, never a crash nor a message quoting the file at length.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "spec/spec.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  const fs::path dir = fs::path(::testing::TempDir()) / "spec-bad-input";
  fs::create_directories(dir);
  return dir;
}

std::string error_loading(const fs::path& file) {
  try {
    (void)load_spec_file(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_loading_text(const std::string& name, const std::string& text) {
  const fs::path file = scratch() / name;
  std::ofstream(file, std::ios::binary) << text;
  return error_loading(file);
}

}  // namespace

TEST(SpecBadInput, A150000DeepSpecIsRefusedNotACrash) {
  const std::string deep =
      "{\"name\": " + std::string(150000, '[') + std::string(150000, ']') + "}";
  EXPECT_THAT(error_loading_text("deep.json", deep),
              HasSubstr("deep.json: nested deeper than 512 at line 1 column 521"));
}

TEST(SpecBadInput, ADuplicateKeyIsRefusedNotTheLastKept) {
  EXPECT_THAT(error_loading_text("dup.json",
                                 "{\"name\": \"a\",\n \"repetitions\": 3,\n"
                                 " \"repetitions\": 30}"),
              HasSubstr("dup.json: duplicate key 'repetitions' at /repetitions (line 3 column 2)"));
}

TEST(SpecBadInput, ASpecOver4MiBIsRefusedBySizeNotCutAndQuoted) {
  const std::string big = "{\"name\": \"" + std::string(std::size_t{5} << 20, 'x') + "\"}";
  const std::string e = error_loading_text("big.json", big);
  EXPECT_THAT(e, HasSubstr("big.json is 5242892 bytes, over the 4 MiB limit"));
  EXPECT_LT(e.size(), 200u);
}

TEST(SpecBadInput, ASyntaxErrorQuotesAtMost80BytesOfTheSpec) {
  const std::string open_string = "{\"name\": \"" + std::string(std::size_t{1} << 20, 'x');
  const std::string e = error_loading_text("open.json", open_string);
  EXPECT_THAT(e, HasSubstr("open.json: not valid JSON at line 1 column"));
  EXPECT_THAT(e, HasSubstr("missing closing quote"));
  EXPECT_LT(e.size(), 300u);
}
