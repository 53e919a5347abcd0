#include "proxy/app/near_match.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include "policies/near_guards.hpp"
#include "policies/near_text.hpp"

namespace reprox {

namespace {

// The features of a candidate's text (the Redis index returns texts), from
// a small per-thread memo: the same popular entries come back on many
// misses. Bounded: one entry per slot, replaced on collision.
const policy::near::Features& features_cached(const std::string& text) {
  struct Slot {
    std::string text;
    policy::near::Features features;
  };
  thread_local std::array<Slot, 1024> memo;
  Slot& slot = memo[std::hash<std::string>{}(text) % memo.size()];
  if (slot.text != text || slot.features.entries.empty()) {
    slot.text = text;
    slot.features = policy::near::features_of(policy::near::normalize(text));
  }
  return slot.features;
}

}  // namespace

NearProbe near_probe(policy::NearQuery query) {
  namespace near = policy::near;
  NearProbe p;
  p.normalized = near::normalize(query.text);
  p.bands = near::band_keys(near::simhash(near::features_of(p.normalized)));
  p.query = std::move(query);
  return p;
}

void find_near(NearIndex& index, const NearProbe& probe, double threshold, const std::string& self_key,
               std::function<void(NearReport)> done) {
  auto scored = [text = probe.query.text, normalized = probe.normalized, threshold, self_key,
                 done = std::move(done)](std::vector<NearEntry> entries) {
    namespace near = policy::near;
    NearReport report;
    report.normalized = normalized;
    const near::Features mine = near::features_of(normalized);
    for (const NearEntry& e : entries) {
      if (e.key == self_key) continue;
      NearCandidate c;
      c.key = e.key;
      c.similarity = near::cosine(mine, e.features ? *e.features : features_cached(e.text));
      if (c.similarity >= threshold) {
        near::GuardVerdict v = near::check_guards(text, e.text);
        if (v.veto) {
          c.veto = v.guard;
          c.why = v.why;
          report.vetoed_above_threshold = true;
        }
      }
      report.candidates.push_back(std::move(c));
    }
    std::sort(report.candidates.begin(), report.candidates.end(),
              [](const NearCandidate& a, const NearCandidate& b) { return a.similarity > b.similarity; });
    for (const NearCandidate& c : report.candidates)
      if (c.similarity >= threshold && c.veto.empty()) {
        report.match = c;
        break;
      }
    done(std::move(report));
  };
  index.candidates(probe.query.context_key, probe.bands, std::move(scored));
}

}  // namespace reprox
