// The labelled set tests/policies/near_pairs.tsv: precision and recall of the
// near-duplicate decision (cosine >= threshold and no guard veto) at three
// thresholds, and the recall of the SimHash bands. Prints a Markdown table.
// NEAR_PAIRS_VERBOSE=1 (or =0.9, a threshold) also prints every pair the
// decision gets wrong at 0.95 (or that threshold) and the different pairs
// that only a guard keeps apart.
//
// The TSV: a header line, then label<TAB>a<TAB>b<TAB>kind, label "same" or
// "different"; in a and b, "\t", "\n" and "\\" stand for a tab, a newline
// and a backslash.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "policies/near_guards.hpp"
#include "policies/near_text.hpp"

namespace reprox::policy::near {
namespace {

// The recall the decision keeps at threshold 0.95 on this set.
constexpr double kRecallFloor = 0.80;

struct Pair {
  bool same = false;
  std::string a, b, kind;
  double cosine = 0;
  GuardVerdict guards;
  bool shares_band = false;
};

std::string unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out.push_back(field[i]);
      continue;
    }
    const char next = field[++i];
    out.push_back(next == 't' ? '\t' : next == 'n' ? '\n' : next);
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) out.push_back(field);
  return out;
}

bool shares_band(const Features& a, const Features& b) {
  const auto ka = band_keys(simhash(a)), kb = band_keys(simhash(b));
  for (int i = 0; i < kBands; ++i) {
    if (ka[i] == kb[i]) return true;
  }
  return false;
}

std::vector<Pair> load_pairs() {
  std::ifstream in(NEAR_PAIRS_TSV);
  std::vector<Pair> pairs;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const auto fields = split_tabs(line);
    if (fields.size() != 4) {
      ADD_FAILURE() << "bad line: " << line;
      continue;
    }
    Pair p;
    p.same = fields[0] == "same";
    EXPECT_TRUE(p.same || fields[0] == "different") << line;
    p.a = unescape(fields[1]);
    p.b = unescape(fields[2]);
    p.kind = fields[3];
    const Features fa = features_of(normalize(p.a)), fb = features_of(normalize(p.b));
    p.cosine = cosine(fa, fb);
    p.guards = check_guards(p.a, p.b);
    p.shares_band = shares_band(fa, fb);
    pairs.push_back(std::move(p));
  }
  return pairs;
}

struct Score {
  double threshold = 0;
  int same = 0, found = 0;       // true pairs, and those the decision accepts
  int different = 0, false_hits = 0;
  double recall() const { return same ? static_cast<double>(found) / same : 0; }
  double precision() const { return found + false_hits ? static_cast<double>(found) / (found + false_hits) : 1; }
};

bool accepted(const Pair& p, double threshold) { return p.cosine >= threshold && !p.guards.veto; }

Score score(const std::vector<Pair>& pairs, double threshold) {
  Score s;
  s.threshold = threshold;
  for (const Pair& p : pairs) {
    (p.same ? s.same : s.different) += 1;
    if (accepted(p, threshold)) (p.same ? s.found : s.false_hits) += 1;
  }
  return s;
}

// The pairs the decision gets wrong, and the different pairs
// only a guard keeps apart.
void print_details(const std::vector<Pair>& pairs) {
  const char* verbose = std::getenv("NEAR_PAIRS_VERBOSE");
  if (!verbose) return;
  const double asked = std::atof(verbose);
  const double threshold = asked > 0 && asked < 1 ? asked : 0.95;
  for (const Pair& p : pairs) {
    const bool guarded = !p.same && p.cosine >= threshold && p.guards.veto;
    if (accepted(p, threshold) == p.same && !guarded) continue;
    std::cout << (guarded ? "GUARD  " : p.same ? "MISSED " : "FALSE  ") << std::fixed << std::setprecision(3)
              << p.cosine << " [" << p.kind << "] " << (p.guards.veto ? p.guards.guard + ": " + p.guards.why : "") << "\n    "
              << p.a << "\n    " << p.b << "\n";
  }
}

const std::vector<Pair>& pairs() {
  static const std::vector<Pair> kPairs = load_pairs();
  return kPairs;
}

TEST(NearPairs, TheSetIsBigAndBalanced) {
  int same = 0, hard = 0;
  for (const Pair& p : pairs()) {
    same += p.same;
    hard += !p.same && p.kind != "unrelated";
  }
  EXPECT_GE(pairs().size(), 300U);
  EXPECT_GE(hard, 120);
  EXPECT_GE(same * 10, static_cast<int>(pairs().size()) * 4);
  EXPECT_LE(same * 10, static_cast<int>(pairs().size()) * 6);
}

TEST(NearPairs, PrecisionAndRecall) {
  std::cout << "\n| threshold | true pairs found | recall | false near-hits | precision |\n"
            << "|---|---|---|---|---|\n";
  for (double t : {0.90, 0.95, 0.98}) {
    const Score s = score(pairs(), t);
    std::cout << std::fixed << std::setprecision(2) << "| " << t << " | " << s.found << " / " << s.same << " | "
              << std::setprecision(3) << s.recall() << " | " << s.false_hits << " / " << s.different << " | "
              << s.precision() << " |\n";
  }
  print_details(pairs());
  const Score at95 = score(pairs(), 0.95);
  EXPECT_EQ(at95.false_hits, 0);
  EXPECT_GE(at95.recall(), kRecallFloor);
}

TEST(NearPairs, BandsFindTheCloseTruePairs) {
  int close = 0, found = 0;
  for (const Pair& p : pairs()) {
    if (!p.same || p.cosine < 0.95) continue;
    ++close;
    found += p.shares_band;
  }
  const double recall = close ? static_cast<double>(found) / close : 0;
  std::cout << "\nLSH recall (true pairs with cosine >= 0.95 sharing a band key): " << found << " / " << close
            << " = " << std::fixed << std::setprecision(3) << recall << "\n";
  ASSERT_GT(close, 0);
  EXPECT_GE(recall, 0.95);
}

// How many entries a lookup returns as candidates: every two distinct first
// questions of the `same` pairs, which ask different things.
TEST(NearPairs, BandCandidateRateAmongDifferentQuestions) {
  std::vector<std::string> questions;
  for (const Pair& p : pairs()) {
    if (p.same && (questions.empty() || questions.back() != p.a)) questions.push_back(p.a);
  }
  std::vector<std::array<uint32_t, kBands>> keys;
  for (const auto& q : questions) keys.push_back(band_keys(simhash(features_of(normalize(q)))));
  size_t total = 0, candidates = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      ++total;
      bool shared = false;
      for (int k = 0; k < kBands; ++k) shared = shared || keys[i][k] == keys[j][k];
      candidates += shared;
    }
  }
  const double rate = static_cast<double>(candidates) / static_cast<double>(total);
  std::cout << "\nBand candidates among " << total << " pairs of different questions: " << candidates << " = "
            << std::fixed << std::setprecision(3) << rate << "\n";
  EXPECT_LT(rate, 0.15);
}

}  // namespace
}  // namespace reprox::policy::near
