// Near-duplicate guards: cheap, conservative vetoes for two last user
// messages whose lexical similarity is high but whose meaning differs
// ("refund 100 USD" / "refund 1000 USD", "I can log in" / "I can't log in",
// "Alice owes Bob" / "Bob owes Alice", "¿Cómo...?" / "Como...?" in another
// language). Each guard is a pure function over the two ORIGINAL messages
// (not normalized: capitals, quotes and separators carry meaning here).
//
// A guard must not veto true near-duplicates: messages that differ only in
// case, whitespace, punctuation, a letter or two, or politeness fillers
// ("please", "hey", "can you", "quick question:"). When in doubt a guard
// vetoes: a veto only costs a generation, a wrong answer costs trust.
#pragma once

#include <string>
#include <string_view>

namespace reprox::policy::near {

struct GuardVerdict {
  bool veto = false;
  std::string guard;  // "numbers" | "negation" | "entities" | "language"; "" when no veto
  std::string why;    // short, e.g. "numbers differ: 100 vs 1000"
};

// Numbers, amounts, dates and times, with their units, in order: digit runs
// with their separators ("1,000" = "1000", "2024-03-05", "15:30"), an
// attached or following unit or suffix ("3 pm" != "3 am", "10 GB" = "10GB",
// "%", "$"/"€" before), English number words ("three" = "3"), month and
// weekday names and relative days ("today", "tomorrow").
GuardVerdict numbers_guard(std::string_view a, std::string_view b);

// The number of negation cues differs: English not, never, no, none, nothing,
// nobody, nowhere, neither, nor, without, cannot, -n't (and "dont", "cant"...);
// Chinese 不 没 别 未 非 无 (but not in 非常, 无论, 未来, 别人, 特别..., nor in
// A-not-A questions like 能不能); Spanish no, nunca, jamás, ni, tampoco, sin,
// nada, nadie; French ne, pas, jamais, sans, rien; German nicht, kein, nie,
// ohne. Also opposites: a word of one message whose opposite is in the
// other only ("on" / "off", "enable" / "disable", "lock" / "unlock", a
// prefix un-, dis-, de-, non-, in-, im- before the same word).
GuardVerdict negation_guard(std::string_view a, std::string_view b);

// Entities: capitalised words not at a sentence start, acronyms, snake_case,
// camelCase, dotted and path-like identifiers, quoted strings, URLs and
// emails. Vetoes when an entity of one message is not a whole word (or
// phrase) of the other, compared case-insensitively and without punctuation,
// or when the content words both messages share appear in a different order
// ("Alice owes Bob" / "Bob owes Alice", "from savings to checking" / "from
// checking to savings"); fillers and function words do not count for order.
GuardVerdict entities_guard(std::string_view a, std::string_view b);

// Writing systems (Latin, Han, kana, Hangul, Cyrillic, Greek, Arabic, Hebrew,
// Devanagari, Thai): the one with most letters differs. Among Latin texts,
// a stop-word count for en, es, fr, de, pt and it names a language when it
// is clear (at least two hits and two more than the runner-up); vetoes when
// both are named and differ.
GuardVerdict language_guard(std::string_view a, std::string_view b);

// The guards in order (numbers, negation, entities, language): the first
// veto, or no veto.
GuardVerdict check_guards(std::string_view a, std::string_view b);

}  // namespace reprox::policy::near
