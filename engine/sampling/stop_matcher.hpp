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
// into pieces. The sent text stops right before the winning match; the match
// and everything after it are dropped (finish_reason "stop").
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
  explicit StopMatcher(std::vector<std::string> stop_strings);

  // Appends `piece` to the stream. After a stop, returns {"", false} forever.
  Output feed(std::string_view piece);

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
  int stopped_index_ = -1;
  bool flushed_ = false;
};

}  // namespace reprox::engine
