// Continuous batching with chunked prefill (vLLM v1 style): schedule() is a
// pure function from plain state to the next step's plan, testable without a
// model. The engine step (engine/runtime/batch_runner) is: schedule() ->
// apply the plan (preempt, admit with a copy of the reused prefix) -> run the
// model on the scheduled rows -> sample -> update each sequence's state.
//
// Blocks are the engine's KV working memory in units of block_size tokens,
// an accounting unit only: each running sequence keeps its own contiguous KV
// and holds blocks_for_tokens(its KV length); nothing is shared between
// sequences, so preempting one frees all it holds.
//
// The unit is a sequence: one choice of a request. A sequence's tokens are
// its prompt followed by the tokens sampled so far; computed_len of them have
// KV. Each step computes positions [start, start + num_tokens) of some
// sequences; when a step reaches the end of a sequence (`samples`), the
// logits of its last position are sampled for its next token. So a step is
// a prefill chunk, a decode (one token), or the recomputation of a preempted
// sequence (prompt + generated tokens, chunked), all the same to the model.
//
// Exactness: the plan chooses which rows run together and in which chunks;
// the kernels are row- and batch-invariant, so that never changes a number.
// Each sequence samples its tokens strictly in order (its own step counter is
// `generated`); a token is sampled exactly once: preemption drops KV, never a
// sampled token, and recomputing it gives the same bits.
//
// Policy: slots go round-robin across requests (the sequences of one
// request, its choices, share an arrival): every request's first unfinished
// sequence (by id) before any request's second, and so on, so a request
// with many choices cannot keep a later one out of the batch. Within one
// such round, in arrival order (arrival, then id):
//   1. decodes of running sequences (1 token each),
//   2. prefill chunks of running sequences (min(remaining, chunk_size, budget)),
//   3. only if nothing was preempted: admission of waiting sequences, first
//      come first served; the first one that does not fit stops admission
//      for the rest of the step.
// With one sequence per request there is one round: decodes, chunks, then
// admissions.
// When a running sequence needs more blocks than are free, the latest-arrived
// running sequence is preempted (possibly itself) until it fits; a preempted
// sequence's scheduled work this step is undone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reprox::engine::sched {

using RequestId = uint64_t;

struct SchedulerConfig {
  int32_t block_size = 16;           // tokens per KV block (the engine's kv_block_size)
  int64_t max_tokens_per_step = 512; // token budget: prefill tokens + one per decode
  int32_t max_batch_size = 16;       // sequences per step
  int64_t chunk_size = 256;          // most prefill tokens of one sequence per step
  // Forked siblings copy the prompt's KV whole (the engine's per-sequence
  // caches) rather than share its full blocks and copy only the partial
  // last one (a paged block table): every copy is counted.
  bool forks_copy_prompt = false;
};

// "" when valid: every field >= 1.
std::string validate_scheduler_config(const SchedulerConfig& config);

struct SequenceState {
  RequestId id = 0;
  uint64_t arrival = 0;       // lower runs first; ties broken by id
  int64_t prompt_len = 0;
  int64_t generated = 0;      // tokens sampled so far (its step counter)
  int64_t max_tokens = 0;     // tokens to sample in total (>= 1)
  int32_t extra_choices = 0;  // n - 1 siblings to fork when the prompt is done (see ScheduledSequence::forks)
  // Running sequences:
  int64_t computed_len = 0;        // leading tokens with KV in its blocks (< prompt_len + generated)
  int32_t blocks_held = 0;         // its block table length
  int32_t releasable_blocks = 0;   // blocks preempting it would free (all it holds)
  // Waiting sequences (hold no blocks): the KV reuse cache's offer this step
  // over prompt + generated tokens (KvReuse::cached_prefix).
  int64_t cached_len = 0;                  // whole blocks, < prompt_len + generated
  int32_t cached_unreferenced_blocks = 0;  // working blocks the copied prefix costs (cached_len / block_size)

  int64_t length() const { return prompt_len + generated; }
  bool finished() const { return generated >= max_tokens; }
};

struct SchedulerState {
  std::vector<SequenceState> running;  // any order
  std::vector<SequenceState> waiting;  // any order (preempted ones included)
  int32_t free_blocks = 0;             // working blocks not held by a running sequence
};

struct ScheduledSequence {
  RequestId id = 0;
  bool admitted = false;   // from the waiting list: copy its cached prefix in first
  int64_t start = 0;       // first position computed (computed_len, or cached_len when admitted)
  int64_t num_tokens = 0;  // positions [start, start + num_tokens)
  int32_t new_blocks = 0;  // fresh blocks to allocate for it this step (fork copies included)
  bool samples = false;    // the step reaches the end of the sequence: sample its next token
  // On the step that finishes the prompt of a sequence with extra_choices:
  // fork that many siblings after sampling. Each sibling gets the prompt's
  // KV: with forks_copy_prompt a whole copy, all counted in new_blocks;
  // otherwise the shared full blocks and a copy of the partial last one (one
  // of the new_blocks when prompt_len % block_size != 0). Siblings then run
  // with generated = 1 and computed_len = prompt_len.
  int32_t forks = 0;
};

struct ScheduleOutput {
  std::vector<RequestId> preempted;            // free their blocks before the step; back to waiting
  std::vector<ScheduledSequence> scheduled;    // arrival order
  int64_t num_tokens = 0;                      // sum of num_tokens
  int32_t new_blocks = 0;                      // sum of new_blocks
  int32_t admitted = 0;
};

ScheduleOutput schedule(const SchedulerState& state, const SchedulerConfig& config);

// Blocks a sequence holds once `tokens` positions have KV.
int32_t blocks_for_tokens(int64_t tokens, int32_t block_size);
// The most blocks a sequence (with its forked siblings) can ever hold: a
// request needing more than the pool can never finish, so reject it (400)
// before it enters the queue.
int32_t peak_blocks(const SequenceState& sequence, int32_t block_size, bool forks_copy_prompt = false);

}  // namespace reprox::engine::sched
