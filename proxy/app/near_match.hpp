// Near-duplicate matching of one request against the candidate index:
// candidates sharing an LSH band with the request's last user message are
// scored by cosine similarity (policy::near) and checked by the guards; the
// best one at or above the threshold that no guard vetoes is the match.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policies/near_key.hpp"
#include "proxy/cache/near_index.hpp"

namespace reprox {

struct NearCandidate {
  std::string key;
  double similarity = 0;
  std::string veto;  // the guard that vetoed it ("" when none), and why
  std::string why;
};

struct NearReport {
  std::string normalized;                  // the request's normalized last user message
  std::vector<NearCandidate> candidates;   // best first
  std::optional<NearCandidate> match;      // the best unvetoed candidate at or above the threshold
  bool vetoed_above_threshold = false;     // a guard stopped a candidate that scored high enough
};

// What the index needs to record an entry and to look candidates up.
struct NearProbe {
  policy::NearQuery query;
  NearBands bands{};
  std::string normalized;
};
NearProbe near_probe(policy::NearQuery query);

// Looks `probe` up in `index`; `done` runs once with the report, on the
// index's thread (callers post). `self_key` (the request's own exact key) is
// never a candidate.
void find_near(NearIndex& index, const NearProbe& probe, double threshold, const std::string& self_key,
               std::function<void(NearReport)> done);

}  // namespace reprox
