#include "kernel/series_choice.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/error.h"

namespace isolab {

namespace {

struct Candidate {
  const MailMessage* mail;
  PatchSubject at;
  bool in_body = false;  // its place came from the in-body Subject
};

std::string place(const PatchSubject& p) {
  return std::to_string(p.index) + (p.of_form ? " of " : "/") + std::to_string(p.total);
}

// The message's place as a patch of the series, or why it is no patch of it.
struct Reading {
  std::optional<Candidate> candidate;
  std::string left_out_why;
};

// A diff-less message that answers one of the thread's messages.
bool answers_thread(const MailMessage& m, const std::set<std::string>& ids) {
  if (!m.in_reply_to.empty() && ids.count(m.in_reply_to)) return true;
  for (const auto& r : m.references)
    if (ids.count(r)) return true;
  return false;
}

Reading read_place(const MailMessage& m, const std::set<std::string>& ids,
                   const std::string& where) {
  std::optional<PatchSubject> p = parse_patch_subject(m.subject);
  bool in_body = false;
  if ((!p || p->reply) && m.has_diff && !m.body_subject.empty()) {
    if (auto q = parse_patch_subject(m.body_subject); q && !q->reply) {
      p = q;
      in_body = true;
    }
  }
  if (!p)
    return {std::nullopt, m.has_diff ? "a diff whose subject has no [PATCH] prefix: no patch of "
                                       "the series"
                                     : "no [PATCH] prefix in its subject: a note or reply"};
  if (p->reply) return {std::nullopt, m.has_diff ? "a reply (its diff is not applied)" : "a reply"};
  if (p->numbered && p->index == 0)
    return {std::nullopt, "the cover letter (" + position_text(*p) + ")"};
  if (!m.has_diff) {
    if (answers_thread(m, ids))
      return {std::nullopt,
              "a follow-up without Re: answering " +
                  (m.in_reply_to.empty() ? std::string("the thread") : m.in_reply_to) +
                  " (no diff)"};
    throw Error(where + ": " + describe_message(m) +
                " carries no diff and answers no message of the file");
  }
  return {Candidate{&m, *p, in_body}, ""};
}

bool newer(const Candidate& a, const Candidate& b) {
  return a.at.version != b.at.version ? a.at.version > b.at.version : a.at.revision > b.at.revision;
}

class Chooser {
 public:
  Chooser(const std::vector<MailMessage>& messages, std::string where)
      : messages_(messages), where_(std::move(where)) {}

  SeriesChoice run() {
    read_all();
    if (candidates_.empty())
      throw Error(where_ + ": no patch among its " + std::to_string(messages_.size()) +
                  " messages (a patch's subject starts [PATCH], [PATCH m/n] or [PATCH m of n])");
    version_ =
        std::max_element(candidates_.begin(), candidates_.end(), [](const auto& a, const auto& b) {
          return a.at.version < b.at.version;
        })->at.version;
    try {
      fill_places();
    } catch (const Error&) {
      if (!whole_file_applies()) throw;
      return whole_file();
    }
    return finish();
  }

 private:
  void read_all() {
    std::set<std::string> ids;
    for (const auto& m : messages_)
      if (!m.message_id.empty()) ids.insert(m.message_id);
    for (const auto& m : messages_) {
      Reading r = read_place(m, ids, where_);
      if (r.candidate)
        candidates_.push_back(*r.candidate);
      else
        not_patches_.push_back({&m, r.left_out_why});
    }
  }

  // The series' length: the largest n among the chosen version's patches numbered within it.
  int series_total() const {
    int n = 0;
    for (const auto& c : candidates_)
      if (c.at.version == version_ && !c.at.extra()) n = std::max(n, c.at.total);
    return n;
  }

  // The newest of the candidates, the others left out as replaced by it; throws on two of
  // one revision.
  const Candidate& newest_of(std::vector<const Candidate*> at, const std::string& what) {
    std::stable_sort(at.begin(), at.end(),
                     [](const auto* a, const auto* b) { return newer(*a, *b); });
    for (std::size_t i = 1; i < at.size(); ++i) {
      const Candidate& top = *at.front();
      const Candidate& c = *at[i];
      if (c.at.version == top.at.version && c.at.revision == top.at.revision) {
        if (!c.mail->message_id.empty() && c.mail->message_id == top.mail->message_id) {
          used_.insert(c.mail);
          left_.push_back({c.mail, "a second copy of " + describe_message(*top.mail)});
          continue;
        }
        throw Error(where_ + ": " + what + " appears twice: " + describe_message(*top.mail) +
                    " and " + describe_message(*c.mail));
      }
      used_.insert(c.mail);
      left_.push_back({c.mail, position_text(c.at) + ": replaced by " + position_text(top.at) +
                                   " (" + describe_message(*top.mail) + ")"});
    }
    return *at.front();
  }

  void take(const Candidate& c, std::string note) {
    used_.insert(c.mail);
    if (c.at.revision > 0)
      note += std::string(note.empty() ? "" : "; ") + "a point reroll (" + version_text(c.at) +
              ") of patch " + std::to_string(c.at.index);
    if (c.in_body)
      note += std::string(note.empty() ? "" : "; ") + "its place is read from its in-body Subject";
    chosen_.push_back({c.mail, c.at, note});
  }

  void fill_places() {
    const int n = series_total();
    std::vector<int> resent;
    for (int m = 1; m <= n; ++m)
      if (!at_place(version_, m, false).empty()) resent.push_back(m);
    for (int m = 1; m <= n; ++m) {
      std::vector<const Candidate*> here = at_place(version_, m, false);
      const std::string what = "patch " + std::to_string(m) + "/" + std::to_string(n) + " of v" +
                               std::to_string(version_);
      if (!here.empty()) {
        const Candidate& c = newest_of(here, what);
        take(c, c.at.total != n ? "numbered out of " + std::to_string(c.at.total) +
                                      ", the series has " + std::to_string(n)
                                : "");
        continue;
      }
      const Candidate* older = from_older_version(m, n);
      if (!older)
        throw Error(where_ + ": " + what + " is missing (the mbox has " + have_list() + ")");
      take(*older, "taken from " + version_text(older->at) + ": v" + std::to_string(version_) +
                       " re-sent only " + places_text(resent, n) + " (a partial reroll)");
    }
    std::map<int, std::vector<const Candidate*>> extras;
    for (const auto& c : candidates_)
      if (c.at.version == version_ && c.at.extra()) extras[c.at.index].push_back(&c);
    for (const auto& [m, list] : extras) {
      const Candidate& c = newest_of(list, "patch " + place(list.front()->at));
      take(c, "numbered " + place(c.at) + ", past the series' " + std::to_string(n) +
                  ": applied after it, as b4 am and patchwork count it in the series");
    }
  }

  std::vector<const Candidate*> at_place(int version, int m, bool same_total_only,
                                         int total = 0) const {
    std::vector<const Candidate*> out;
    for (const auto& c : candidates_)
      if (c.at.version == version && c.at.index == m && !c.at.extra() &&
          (!same_total_only || c.at.total == total))
        out.push_back(&c);
    return out;
  }

  // Place m of the newest older version numbered out of the same n (b4's partial reroll).
  const Candidate* from_older_version(int m, int n) {
    for (int v = version_ - 1; v >= 1; --v) {
      auto here = at_place(v, m, true, n);
      if (!here.empty())
        return &newest_of(here, "patch " + std::to_string(m) + "/" + std::to_string(n) + " of v" +
                                    std::to_string(v));
    }
    return nullptr;
  }

  static std::string places_text(const std::vector<int>& places, int n) {
    std::string s;
    for (int m : places) s += (s.empty() ? "" : ", ") + std::to_string(m) + "/" + std::to_string(n);
    return s.empty() ? "none" : s;
  }

  // "1/3, 3/3": the places the chosen version has, for the message of a missing one.
  std::string have_list() const {
    std::vector<std::pair<int, int>> have;
    for (const auto& c : candidates_)
      if (c.at.version == version_) have.emplace_back(c.at.index, c.at.total);
    std::sort(have.begin(), have.end());
    std::string s;
    for (const auto& [m, n] : have)
      s += (s.empty() ? "" : ", ") + std::to_string(m) + "/" + std::to_string(n);
    return s.empty() ? "none" : s;
  }

  // Patches only, one version, no numbered place twice: what git am applies in file order.
  bool whole_file_applies() const {
    if (!not_patches_.empty()) return false;
    std::set<std::pair<int, int>> places;
    for (const auto& c : candidates_) {
      if (c.at.version != candidates_.front().at.version ||
          c.at.revision != candidates_.front().at.revision)
        return false;
      if (c.at.numbered && !places.insert({c.at.index, c.at.total}).second) return false;
    }
    return true;
  }

  SeriesChoice whole_file() const {
    SeriesChoice s;
    s.version = version_text(candidates_.front().at);
    s.whole_file = true;
    for (const auto& c : candidates_)
      s.patches.push_back({c.mail, c.at, "taken in file order, as git am applies the whole file"});
    return s;
  }

  SeriesChoice finish() {
    SeriesChoice s;
    s.version = "v" + std::to_string(version_);
    s.patches = chosen_;
    for (const auto& c : candidates_)
      if (!used_.count(c.mail)) left_.push_back({c.mail, why_older(c)});
    for (const auto& l : not_patches_) left_.push_back(l);
    std::sort(left_.begin(), left_.end(),
              [](const auto& a, const auto& b) { return a.mail->position < b.mail->position; });
    s.left_out = left_;
    return s;
  }

  // An older version's patch: replaced by the patch taken at its place, or left with its
  // whole version.
  std::string why_older(const Candidate& c) const {
    for (const auto& p : chosen_)
      if (p.at.index == c.at.index && p.at.total == c.at.total && !c.at.extra() && !p.at.extra())
        return position_text(c.at) + ": replaced by " + position_text(p.at) + " (" +
               describe_message(*p.mail) + ")";
    return position_text(c.at) + ": an older version (the series is v" + std::to_string(version_) +
           ")";
  }

  const std::vector<MailMessage>& messages_;
  const std::string where_;
  std::vector<Candidate> candidates_;
  std::vector<LeftOutMessage> not_patches_, left_;
  std::vector<ChosenPatch> chosen_;
  std::set<const MailMessage*> used_;
  int version_ = 0;
};

}  // namespace

SeriesChoice choose_series(const std::vector<MailMessage>& messages, const std::string& where) {
  return Chooser(messages, where).run();
}

}  // namespace isolab
