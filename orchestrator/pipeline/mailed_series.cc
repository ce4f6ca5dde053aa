#include "pipeline/mailed_series.h"

#include "base/error.h"
#include "base/files.h"
#include "spec/json_object.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

bool holds_series(const fs::path& patch) {
  std::error_code ec;
  return fs::is_regular_file(patch, ec) && is_mbox_series(read_file(patch));
}

std::string list_text(const json& a) {
  std::string s;
  for (const auto& t : a) s += (s.empty() ? "" : "; ") + t.get<std::string>();
  return s;
}

std::string patch_lines(const json& p) {
  std::string s = "    " + std::to_string(p["number"].get<int>()) + ". " +
                  sanitize_excerpt(p["subject"].get<std::string>(), 100) + " [" +
                  p["place"].get<std::string>() + "; text from " +
                  p["text_from"].get<std::string>() + "; b4: " + p["b4"].get<std::string>() + "]\n";
  if (!p["note"].get<std::string>().empty()) s += "       " + p["note"].get<std::string>() + "\n";
  if (!p["trailers_from_replies"].empty())
    s += "       trailers from replies: " + list_text(p["trailers_from_replies"]) + "\n";
  if (!p["trailers"].empty()) s += "       trailers: " + list_text(p["trailers"]) + "\n";
  return s;
}

std::string series_text(const std::string& variant, const json& r) {
  std::string s =
      "  variant " + variant + ": " + r["mbox"].get<std::string>() + ": " +
      std::to_string(r["patches"].size()) + " patch(es) of " + r["version"].get<std::string>() +
      (r["whole_file"].get<bool>() ? ", the whole file in order as git am applies it" : "") +
      "; b4: " + r["b4"].get<std::string>() + "\n";
  for (const auto& p : r["patches"]) s += patch_lines(p);
  if (!r["left_out"].empty()) s += "    left out:\n";
  for (const auto& l : r["left_out"])
    s += "      " + l["message"].get<std::string>() + ": " + l["why"].get<std::string>() + "\n";
  return s;
}

}  // namespace

json mailed_series_json(const MailedSeries& s) {
  json patches = json::array();
  for (const auto& p : s.patches)
    patches.push_back({{"number", static_cast<int>(patches.size()) + 1},
                       {"path", p.path.string()},
                       {"subject", p.subject},
                       {"message_id", p.message_id},
                       {"place", p.place},
                       {"text_from", p.text_from},
                       {"b4", p.b4},
                       {"trailers", p.trailers},
                       {"trailers_from_replies", p.trailers_from_replies},
                       {"note", p.note}});
  json left = json::array();
  for (const auto& l : s.left_out) left.push_back({{"message", l.message}, {"why", l.why}});
  return {{"mbox", s.mbox.string()},    {"version", s.version}, {"b4", s.b4},
          {"whole_file", s.whole_file}, {"patches", patches},   {"left_out", left}};
}

void expand_mailed_series(Spec& spec, const fs::path& cache_dir, ProcessRunner& runner) {
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    std::vector<fs::path> patches;
    for (const fs::path& p : spec.variants[i].patches) {
      if (!holds_series(p)) {
        patches.push_back(p);
        continue;
      }
      try {
        const MailedSeries s = expand_mbox_series(p, cache_dir / "series", runner);
        for (const auto& mp : s.patches) patches.push_back(mp.path);
        spec.variants[i].mailed_series.push_back(mailed_series_json(s));
      } catch (const Error& e) {
        throw SpecError(json_child(json_child("/variants", i), "patches"), e.what());
      }
    }
    spec.variants[i].patches = std::move(patches);
  }
}

std::string mailed_series_text(const Spec& spec) {
  std::string s;
  for (const auto& v : spec.variants)
    for (const auto& r : v.mailed_series) s += series_text(v.name, r);
  return s.empty() ? s : "Mailed series (how each mbox was read):\n" + s;
}

json with_mail_facts(const VariantSpec& v, const fs::path& path, json entry) {
  for (const auto& r : v.mailed_series)
    for (const auto& p : r["patches"])
      if (p["path"].get<std::string>() == path.string()) {
        entry["tool"] = p["text_from"];
        entry["trailers"] = p["trailers"];
        entry["trailers_from_replies"] = p["trailers_from_replies"];
        entry["message_id"] = p["message_id"];
      }
  return entry;
}

}  // namespace isolab
