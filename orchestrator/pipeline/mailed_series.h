// A variant's patch entry may be a mailed series in one mbox (kernel/mbox_series.h): before
// anything is built, each such entry is replaced by the series' patches in order, and how the
// mbox was read (which tool chose each patch, its trailers, every message left out and why)
// is kept with the variant for the run's output, the dry run's plan and result.json.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "kernel/mbox_series.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

// Replaces, in each variant's patches, every file holding more than one mail message
// (is_mbox_series) by its series' patches, written under cache_dir/series (content-addressed),
// and appends mailed_series_json() of each to the variant's mailed_series. Throws SpecError
// with the pointer /variants/<i>/patches and a message that starts with the mbox's path and
// names the message: "...: patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)".
void expand_mailed_series(Spec& spec, const std::filesystem::path& cache_dir,
                          ProcessRunner& runner);

// {"mbox", "version", "b4", "whole_file", "patches": [{"number", "path", "subject",
// "message_id", "place", "text_from", "b4", "trailers", "trailers_from_replies", "note"}],
// "left_out": [{"message", "why"}]} (docs/RESULT_SCHEMA.md, variants.<name>.mailed_series).
nlohmann::json mailed_series_json(const MailedSeries& s);

// The readings of every variant as text, one block per mbox: the patches in order with the tool
// whose text is applied, b4's answer and the trailers, then each message left out and why;
// "" when no variant holds a mailed series.
std::string mailed_series_text(const Spec& spec);

// The patch entry of result.json's variants.<name>.patches[] for `path`, with "tool" and
// "trailers" added when the variant's mailed_series wrote that file; `entry` as given else.
nlohmann::json with_mail_facts(const VariantSpec& v, const std::filesystem::path& path,
                               nlohmann::json entry);

}  // namespace isolab
