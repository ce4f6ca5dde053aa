// load_result (results/result_file.h) and results::read_result (results/result.h) on a
// result.json that is not one: refused with a message, not a crash (compare, report, calibrate
// and history read runs through the first, budgets/record.h rewrites one through the second).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "results/result.h"
#include "results/result_file.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(ResultBadJson, A150000DeepResultIsRefusedNotACrash) {
  const fs::path run = fs::path(::testing::TempDir()) / "deep-run";
  fs::create_directories(run);
  std::ofstream(run / "result.json")
      << "{\"cells\": " << std::string(150000, '[') << std::string(150000, ']') << "}";
  try {
    (void)load_result(run);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("result.json: nested deeper than 512 at line 1 column 522"));
  }
}

TEST(ResultBadJson, ReadResultHasLoadResultsLimitsAndNamesTheFile) {
  const fs::path run = fs::path(::testing::TempDir()) / "deep-run-typed";
  fs::create_directories(run);
  std::ofstream(run / "result.json")
      << "{\"cells\": " << std::string(150000, '[') << std::string(150000, ']') << "}";
  try {
    (void)results::read_result(run / "result.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("result.json: nested deeper than 512 at line 1 column 522"));
  }
  std::ofstream(run / "result.json", std::ios::trunc) << R"({"schema_version": 1, "cells": [)";
  try {
    (void)results::read_result(run / "result.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr((run / "result.json").string()));
    EXPECT_THAT(e.what(), HasSubstr("not valid JSON at line 1 column 33"));
  }
}
