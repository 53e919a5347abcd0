// Continuous batching for the engine thread: the requests in flight, one
// model pass per step over all of them.
//
// A step: drop cancelled requests (their KV goes at once) -> schedule() over
// plain state (engine/scheduler) -> preempt / admit (copying a cached prefix
// in from KvReuse) -> one Model::forward_batch over every scheduled row
// (prefill chunks and single-token decodes together) -> sample each sequence
// that reached its end -> emit, fork the other choices after the prompt,
// finish (keeping the KV for the next turn).
//
// Unit: a sequence is one choice of a request. Each keeps its own contiguous
// KvCache, grown by doubling as it fills; the scheduler's block accounting is
// the engine's working memory (`working_blocks` blocks of block_size tokens),
// and a running sequence holds blocks_for_tokens(its KV length). When that is
// short, the latest-arrived sequence is preempted: its KV is dropped (and
// offered to the reuse cache), its sampled tokens kept, and it is recomputed
// later.
//
// Exactness: which rows share a pass and in which chunks a prompt is computed
// never changes a bit in strict mode (batch-invariant kernels; tested by the
// needle test in tests/engine/runtime). Every choice samples with its own
// (seed, choice, step) stream, and OrderedOutput delivers a request's events
// in choice order.
//
// Threading: the engine thread makes every call.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/generation.hpp"
#include "engine/runtime/engine_job.hpp"
#include "engine/runtime/guide_cache.hpp"
#include "engine/sampling/token_guide.hpp"
#include "engine/scheduler/scheduler.hpp"

namespace reprox::tok {
class Tokenizer;
}

namespace reprox::engine {

class Model;
class KvReuse;

// What the runner has done so far (for tests, benchmarks and metrics).
struct BatchStats {
  uint64_t steps = 0;           // model passes
  uint64_t rows = 0;            // sequences computed, summed over passes
  uint32_t max_rows = 0;        // the most sequences in one pass
  uint64_t preemptions = 0;
  uint32_t running = 0;         // sequences with KV now
  uint32_t waiting = 0;         // sequences waiting for admission now
  uint32_t free_kv_slots = 0;   // KV slots not held (Model::free_kv_slots; 0 without slots)
  uint64_t guide_mask_walks = 0;  // guided-decoding masks computed, not found cached
};

struct BatchConfig {
  sched::SchedulerConfig schedule;  // block_size must equal KvReuse's
  int32_t working_blocks = 0;       // KV working memory in blocks (>= one request's peak)
};

class BatchRunner {
 public:
  // before_complete runs on the engine thread just before a request's
  // on_complete (the engine publishes its KV counters there).
  BatchRunner(const Model& model, std::shared_ptr<const tok::Tokenizer> tokenizer, std::vector<int32_t> stop_ids,
              std::string fingerprint, KvReuse* kv_reuse, BatchConfig config, std::function<void()> before_complete);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Takes a new request (it waits for admission by the next steps).
  void add(EngineJob job);
  // Runs one step. False when there was nothing to do.
  bool step();

  // Token ids the sampler draws from: those both the model's logits and the
  // tokenizer have. Fixed at construction; any thread.
  int32_t vocab_size() const { return vocab_; }
  size_t waiting_requests() const;  // requests not yet admitted
  size_t running_sequences() const;
  BatchStats stats() const;

 private:
  struct Request;
  struct Sequence;

  void drop_cancelled();
  sched::SchedulerState scheduler_state();
  void preempt(Sequence& s);
  void admit(Sequence& s, int64_t start);
  struct Draw;
  // Creates the other choices of `primary`'s request; each draws from `logits` too.
  void fork(Sequence& primary, const float* logits, std::vector<Draw>& draws);
  // Emits a drawn token: the next event, or the end of the choice.
  void emit(Sequence& s, const Draw& d);
  void finish(Sequence& s, const std::string& finish_reason);
  void fail(Request& r, const EngineError& error);
  Sequence* find(sched::RequestId id);
  void remove_done();

  const Model& model_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  std::vector<int32_t> stop_ids_;
  std::string fingerprint_;
  KvReuse* kv_reuse_;  // null: reuse off
  BatchConfig config_;
  std::function<void()> before_complete_;
  const int32_t vocab_;
  std::shared_ptr<const GuideVocabulary> guide_vocabulary_;  // built by the first guided job
  GuideCache guides_;  // shared by requests that ask for the same guide

  std::vector<std::unique_ptr<Sequence>> sequences_;  // running and waiting, any order
  sched::RequestId next_id_ = 1;
  uint64_t next_arrival_ = 0;
  BatchStats stats_;
};

}  // namespace reprox::engine
