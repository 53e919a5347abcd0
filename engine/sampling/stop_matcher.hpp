// Stop strings on the detokenized text stream (OpenAI `stop`, up to 4).
//
// Feed each newly decoded piece of text; feed() returns the text that is safe
// to send now. Text that could still turn out to be the beginning of a stop
// string is held back, so nothing sent ever has to be retracted. Matching is
// on UTF-8 bytes; pieces may split characters anywhere. Returned text never
// ends inside a UTF-8 sequence: an incomplete trailing sequence is held until
// its remaining bytes arrive (flush() releases whatever is left, as is).
//
// Which stop wins: the one whose match ENDS earliest in the stream (where a
// reader going byte by byte would first see a complete stop string); on a tie,
// the longer one (earlier start). This does not depend on how the text was cut
// into pieces. The sent text stops right before the winning match (or, with
// keep_match, right after it: vLLM's include_stop_str_in_output); everything
// after it is dropped (finish_reason "stop").
//
// Not thread-safe; one per choice.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace reprox::engine {

class StopMatcher {
 public:
  struct Output {
    std::string text;      // safe to send now (may be empty)
    bool stopped = false;  // a stop string matched in this call
  };

  // Empty strings are ignored (they would match everywhere).
  explicit StopMatcher(std::vector<std::string> stop_strings, bool keep_match = false);

  // Appends `piece` to the stream. After a stop, returns {"", false} forever.
  // With may_end false no match may end inside `piece` (vLLM's min_tokens:
  // the first tokens cannot stop); a later match may still start in it.
  Output feed(std::string_view piece, bool may_end = true);

  // End of generation without a stop (length, eos): returns all held text.
  std::string flush();

  bool stopped() const { return stopped_index_ >= 0; }
  // The stop string that matched; only valid when stopped().
  const std::string& matched_stop() const { return stops_[static_cast<size_t>(stopped_index_)]; }
  size_t held_bytes() const { return held_.size(); }
  bool empty() const { return stops_.empty(); }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // received, not yet sent
  size_t unarmed_ = 0;  // bytes at the start of held_ in which no match may end
  int stopped_index_ = -1;
  bool keep_match_;
  bool flushed_ = false;
};

}  // namespace reprox::engine
