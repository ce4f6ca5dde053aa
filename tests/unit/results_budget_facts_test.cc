// results/budget_facts.h: what the budgets judge reads of a run, with every wrong shape read as
// absent (a hostile cell is not judged, never an abort), and results/run_facts.h's unfinished
// run and results/variant_facts.h's recorded kernel.
#include <gtest/gtest.h>

#include "results/budget_facts.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"

namespace isolab {
namespace {

using nlohmann::json;

const json kCell = json::parse(R"({
  "id": "g-r0", "variant": "g", "status": "ok", "accelerator": "kvm",
  "guest": {"isolated": "2-3"},
  "metrics": {"o.oslat_max_us": {"unit": "us", "values": [12, null, "x"], "cpus": [2, 3, 4],
                                 "windows_s": [10, "soon"]},
              "o.noise.local_timer_per_s": {"unit": 7, "values": 3, "window_s": 9}},
  "histograms": {"o[cpu2]": {"unit": "us", "bucket_ns": 1000, "counts": {"1": 5, "2": "many"},
                             "overflows": "none"}},
  "noise": {"o": {"window_s": 11, "cpus": [{"cpu": 3, "causes": {"local_timer": {"count": 4},
                                                                   "irq": {"count": "x"}}}]}}
})");

TEST(ResultsBudgetFacts, ACellsFieldsTypedWithEveryWrongShapeAbsent) {
  const results::BudgetCell c(kCell);
  EXPECT_TRUE(c.measured());
  EXPECT_EQ(c.id(), "g-r0");
  EXPECT_EQ(c.variant(), "g");
  EXPECT_EQ(c.accelerator(), "kvm");
  EXPECT_EQ(c.isolated(), "2-3");
  EXPECT_EQ(c.workloads(), (std::set<std::string>{"o"}));

  const auto m = c.metric("o.oslat_max_us");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->unit, "us");
  ASSERT_EQ(m->values.size(), 3u);
  EXPECT_EQ(m->values[0].value, 12);
  EXPECT_EQ(m->values[0].cpu, 2);
  EXPECT_EQ(m->values[0].window_s, 10);
  EXPECT_FALSE(m->values[1].value);  // null
  EXPECT_TRUE(m->values[1].window_recorded);
  EXPECT_FALSE(m->values[1].window_s);  // "soon": recorded, but no number
  EXPECT_FALSE(m->values[2].value);     // "x"
  EXPECT_FALSE(m->values[2].window_recorded);

  const auto n = c.metric("o.noise.local_timer_per_s");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->unit, "");
  EXPECT_EQ(n->unit_text, "7");
  EXPECT_FALSE(n->values_array);
  EXPECT_FALSE(c.metric("o.absent"));

  const auto hs = c.histograms();
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].name, "o[cpu2]");
  EXPECT_EQ(hs[0].bucket_ns, 1000);
  ASSERT_EQ(hs[0].counts.size(), 2u);
  EXPECT_EQ(hs[0].counts[0].second, 5);
  EXPECT_FALSE(hs[0].counts[1].second);
  EXPECT_EQ(hs[0].overflows, 0);

  EXPECT_EQ(c.noise_window_s("o"), 11);
  const auto counts = c.noise_cause_counts("o", 3);
  ASSERT_TRUE(counts);
  EXPECT_EQ(*counts, (std::map<std::string, double>{{"local_timer", 4}}));
  EXPECT_FALSE(c.noise_cause_counts("o", 2));
}

TEST(ResultsBudgetFacts, CellsThatAreNotMeasuredOrNotObjects) {
  const json doc = {{"cells",
                     {json::object({{"status", "ok"}, {"warmup", true}}),
                      json::object({{"status", "failed"}}), 17, "cell"}}};
  const auto cells = results::budget_cells(doc);
  ASSERT_TRUE(cells);
  ASSERT_EQ(cells->size(), 4u);
  for (const auto& c : *cells) {
    EXPECT_FALSE(c.measured());
    EXPECT_EQ(c.id(), "");
    EXPECT_TRUE(c.workloads().empty());
  }
  EXPECT_FALSE(results::budget_cells(json::object()));
  EXPECT_FALSE(results::budget_cells(json::array()));
}

TEST(ResultsBudgetFacts, TheSpecsWindowsAndBudgets) {
  const json doc = json::parse(R"({"spec": {"imported": {"window_s": 30},
      "workloads": [{"name": "o", "duration_s": 5}, {"name": "o", "duration_s": 6},
                    {"name": "c", "duration_s": "long"}],
      "budgets": [{"metric": "oslat_max_us", "below": 5}]}})");
  EXPECT_EQ(results::imported_window_s(doc), 30);
  EXPECT_EQ(results::workload_duration_s(doc, "o"), 5);
  EXPECT_FALSE(results::workload_duration_s(doc, "c"));
  EXPECT_FALSE(results::workload_duration_s(doc, "x"));
  ASSERT_NE(results::spec_budgets(doc), nullptr);
  EXPECT_TRUE(results::spec_budgets(doc)->is_array());
  EXPECT_EQ(results::spec_budgets(json::object()), nullptr);
  EXPECT_EQ(results::spec_budgets(json::parse(R"({"spec": {"budgets": null}})")), nullptr);
}

TEST(ResultsRunFacts, AnUnfinishedRunIsInterruptedOrRunning) {
  const auto u =
      results::unfinished_run(json::parse(R"({"status": "interrupted", "cells": [1, 2]})"));
  ASSERT_TRUE(u);
  EXPECT_EQ(u->status, "interrupted");
  EXPECT_EQ(u->cells, 2u);
  EXPECT_EQ(results::unfinished_run(json::parse(R"({"status": "running", "cells": {}})"))->cells,
            0u);
  EXPECT_FALSE(results::unfinished_run(json::parse(R"({"status": "complete"})")));
  EXPECT_FALSE(results::unfinished_run(json::parse(R"({"status": 3})")));
  EXPECT_FALSE(results::unfinished_run(json::array()));
}

TEST(ResultsVariantFacts, TheKernelARunRecordedForAVariant) {
  const json doc = json::parse(R"({"variants": {"v": {"bzimage": "/c/kernels/k/bzImage",
      "build_key": "k"}, "w": 3}})");
  const auto k = results::recorded_kernel(doc, "v");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->bzimage, "/c/kernels/k/bzImage");
  EXPECT_EQ(k->build_key, "k");
  EXPECT_EQ(k->kernel_release, "");
  EXPECT_EQ(k->patches, json::array());
  EXPECT_FALSE(results::recorded_kernel(doc, "w"));
  EXPECT_FALSE(results::recorded_kernel(doc, "x"));
  EXPECT_FALSE(results::recorded_kernel(json::array(), "v"));
  EXPECT_THROW(results::recorded_kernel(json::parse(R"({"variants": {"v": {"bzimage": 1}}})"), "v"),
               json::type_error);
}

}  // namespace
}  // namespace isolab
