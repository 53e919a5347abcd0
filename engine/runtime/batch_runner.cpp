#include "engine/runtime/batch_runner.hpp"

#include <torch/types.h>

#include <algorithm>

#include "engine/kernels/kernels.hpp"
#include "engine/model/model.hpp"
#include "engine/runtime/choice_emitter.hpp"
#include "engine/runtime/engine.hpp"
#include "engine/runtime/guide_cache.hpp"
#include "engine/runtime/guide_vocabulary.hpp"
#include "engine/runtime/kv_reuse.hpp"
#include "engine/runtime/ordered_output.hpp"
#include "engine/sampling/sampler.hpp"

namespace reprox::engine {

struct BatchRunner::Request {
  Request(EngineJob j, uint32_t n, std::vector<int32_t> ends)
      : job(std::move(j)), end_ids(std::move(ends)), out(job.sink, n), unfinished(n) {}
  EngineJob job;
  std::vector<int32_t> end_ids;  // ids that end a choice (finish "stop")
  OrderedOutput out;
  Usage usage;
  uint32_t unfinished;
  bool admitted_once = false;
  bool done = false;  // completed, failed or cancelled: its sequences go
};

struct BatchRunner::Draw {
  Sequence* sequence = nullptr;
  const float* logits = nullptr;  // a row of the pass's logits, or null when
  int32_t argmax = -1;            // the model returned only the argmax of that row
  SampleStatus status = SampleStatus::kOk;
  SampleResult result;
};

struct BatchRunner::Sequence {
  Sequence(std::shared_ptr<Request> r, uint32_t c, int32_t vocab, std::shared_ptr<const tok::Tokenizer> tokenizer)
      : request(std::move(r)), choice(c), sampler(request->job.sampling, vocab, c, request->job.prompt),
        emitter(std::move(tokenizer), c, emitter_options(request->job)) {}

  static EmitterOptions emitter_options(const EngineJob& job) {
    return EmitterOptions{job.stop, job.sampling.logprobs, job.include_stop, job.skip_special, job.logprob_token_ids};
  }

  sched::RequestId id = 0;
  uint64_t arrival = 0;
  std::shared_ptr<Request> request;
  uint32_t choice;
  std::vector<int32_t> tokens;  // prompt, then the sampled tokens; all but the last sampled one have KV when running
  int64_t prompt_len = 0;
  int32_t extra_choices = 0;    // choice 0 only, until it forks the others
  bool running = false;
  bool done = false;
  KvCache kv;                   // running: KV of tokens [0, kv.length); waiting: empty
  Sampler sampler;
  ChoiceEmitter emitter;

  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_len; }
  const std::string& tenant() const { return request->job.tenant; }
};

BatchRunner::BatchRunner(const Model& model, std::shared_ptr<const tok::Tokenizer> tokenizer,
                         std::vector<int32_t> stop_ids, std::string fingerprint, KvReuse* kv_reuse, BatchConfig config,
                         std::function<void()> before_complete)
    : model_(model), tokenizer_(std::move(tokenizer)), stop_ids_(std::move(stop_ids)),
      fingerprint_(std::move(fingerprint)), kv_reuse_(kv_reuse), config_(config),
      before_complete_(std::move(before_complete)),
      vocab_(std::min<int32_t>(tokenizer_->vocab_size(), static_cast<int32_t>(model.config().vocab_size))) {}

BatchRunner::~BatchRunner() = default;

void BatchRunner::add(EngineJob job) {
  if (job.cancelled->load()) return;
  job.max_tokens = std::max<int64_t>(job.max_tokens, 1);
  const uint32_t n = static_cast<uint32_t>(std::max(1, job.sampling.n));
  std::vector<int32_t> all_ends = job.stop_token_ids;
  all_ends.insert(all_ends.end(), stop_ids_.begin(), stop_ids_.end());
  // min_tokens holds back the model's eos ids even with ignore_eos, as vLLM.
  if (job.sampling.min_tokens > 0) job.sampling.end_ids = all_ends;
  std::vector<int32_t> ends = job.ignore_eos ? job.stop_token_ids : std::move(all_ends);
  if (job.guide.kind != GuideSpec::Kind::kNone) {
    if (!guide_vocabulary_) guide_vocabulary_ = make_guide_vocabulary(*tokenizer_);
    job.sampling.guide = guides_.get(job.guide, guide_vocabulary_, ends);
  }
  auto request = std::make_shared<Request>(std::move(job), n, std::move(ends));
  request->usage.prompt_tokens = static_cast<int64_t>(request->job.prompt.size());
  auto s = std::make_unique<Sequence>(request, 0, vocab_, tokenizer_);
  s->id = next_id_++;
  s->arrival = next_arrival_++;
  s->tokens = request->job.prompt;
  s->prompt_len = static_cast<int64_t>(s->tokens.size());
  s->extra_choices = static_cast<int32_t>(n - 1);
  sequences_.push_back(std::move(s));
}

size_t BatchRunner::waiting_requests() const {
  size_t n = 0;
  for (const auto& s : sequences_) n += !s->running && !s->request->admitted_once ? 1 : 0;
  return n;
}

size_t BatchRunner::running_sequences() const {
  size_t n = 0;
  for (const auto& s : sequences_) n += s->running ? 1 : 0;
  return n;
}

BatchStats BatchRunner::stats() const {
  BatchStats out = stats_;
  out.running = static_cast<uint32_t>(running_sequences());
  out.waiting = static_cast<uint32_t>(sequences_.size()) - out.running;
  out.free_kv_slots = static_cast<uint32_t>(model_.free_kv_slots());
  out.guide_mask_walks = guide_vocabulary_ ? guide_vocabulary_->walks() : 0;
  return out;
}

BatchRunner::Sequence* BatchRunner::find(sched::RequestId id) {
  for (auto& s : sequences_)
    if (s->id == id) return s.get();
  return nullptr;
}

void BatchRunner::drop_cancelled() {
  for (auto& s : sequences_) {
    Request& r = *s->request;
    if (!r.done && r.job.cancelled->load(std::memory_order_relaxed)) r.done = true;  // nobody listens any more
  }
  remove_done();
}

void BatchRunner::remove_done() {
  sequences_.erase(std::remove_if(sequences_.begin(), sequences_.end(),
                                  [](const auto& s) { return s->done || s->request->done; }),
                   sequences_.end());
}

sched::SchedulerState BatchRunner::scheduler_state() {
  const int32_t block_size = config_.schedule.block_size;
  sched::SchedulerState state;
  int64_t held = 0;
  for (auto& s : sequences_) {
    sched::SequenceState q;
    q.id = s->id;
    q.arrival = s->arrival;
    q.prompt_len = s->prompt_len;
    q.generated = s->generated();
    q.max_tokens = s->request->job.max_tokens;
    q.extra_choices = s->extra_choices;
    if (s->running) {
      q.computed_len = s->kv.length;
      q.blocks_held = sched::blocks_for_tokens(s->kv.length, block_size);
      q.releasable_blocks = q.blocks_held;
      held += q.blocks_held;
      state.running.push_back(q);
    } else {
      // The cached prefix is copied into the sequence's own cache, so it
      // costs working blocks like computed ones.
      q.cached_len = kv_reuse_ ? kv_reuse_->cached_prefix(s->tenant(), s->tokens) : 0;
      q.cached_unreferenced_blocks = static_cast<int32_t>(q.cached_len / block_size);
      state.waiting.push_back(q);
    }
  }
  state.free_blocks = static_cast<int32_t>(std::max<int64_t>(0, config_.working_blocks - held));
  return state;
}

void BatchRunner::preempt(Sequence& s) {
  if (kv_reuse_) {
    const std::vector<int32_t> computed(s.tokens.begin(), s.tokens.begin() + s.kv.length);
    kv_reuse_->keep(s.tenant(), computed, s.kv);  // resumption may find it again
  }
  s.kv = KvCache{};
  s.running = false;
  ++stats_.preemptions;
}

void BatchRunner::admit(Sequence& s, int64_t start) {
  // Room for what is known to come soon; forward() doubles it when needed,
  // so the memory held stays within 2x of the blocks the scheduler counts.
  const int64_t soon = std::max<int64_t>(static_cast<int64_t>(s.tokens.size()) + config_.schedule.block_size, start);
  s.kv = model_.new_cache(std::min(soon, s.prompt_len + s.request->job.max_tokens));
  if (kv_reuse_) kv_reuse_->copy_prefix(s.tenant(), s.tokens, s.kv);
  if (s.kv.length > start) s.kv.truncate(start);
  Request& r = *s.request;
  if (!r.admitted_once) {
    r.usage.cached_tokens = s.kv.length;
    r.admitted_once = true;
  }
  s.running = true;
}

bool BatchRunner::step() {
  drop_cancelled();
  if (sequences_.empty()) return false;
  const sched::ScheduleOutput plan = sched::schedule(scheduler_state(), config_.schedule);
  for (sched::RequestId id : plan.preempted)
    if (Sequence* s = find(id)) preempt(*s);
  if (plan.scheduled.empty()) {
    if (running_sequences() == 0) {
      // Nothing runs and the first waiting request does not fit even alone
      // (submit checks peak_blocks, so only a misconfiguration gets here).
      Sequence* first = nullptr;
      for (auto& s : sequences_)
        if (!first || s->arrival < first->arrival) first = s.get();
      fail(*first->request, EngineError{EngineErrc::kOutOfWorkingMemory,
                                         "the request needs more KV working memory than the engine has"});
      remove_done();
    }
    return !sequences_.empty();
  }

  std::vector<BatchInput> inputs;
  std::vector<Sequence*> rows;
  for (const sched::ScheduledSequence& step : plan.scheduled) {
    Sequence* s = find(step.id);
    if (s == nullptr) continue;
    if (step.admitted) admit(*s, step.start);
    const int64_t end = std::min<int64_t>(step.start + step.num_tokens, static_cast<int64_t>(s->tokens.size()));
    if (end <= s->kv.length) continue;
    BatchInput in;
    in.tokens.assign(s->tokens.begin() + s->kv.length, s->tokens.begin() + end);
    in.kv = &s->kv;
    in.want_logits = end == static_cast<int64_t>(s->tokens.size());
    // A choice about to fork hands its logits to the others' samplers.
    in.argmax_only = s->sampler.argmax_decides() && !(s->extra_choices > 0 && s->generated() == 0);
    inputs.push_back(std::move(in));
    rows.push_back(s);
  }
  if (inputs.empty()) return true;
  ++stats_.steps;
  stats_.rows += inputs.size();
  stats_.max_rows = std::max(stats_.max_rows, static_cast<uint32_t>(inputs.size()));
  std::string error;
  std::vector<int32_t> argmax;  // of the argmax_only inputs, in order
  const torch::Tensor logits = model_.forward_batch(inputs, &error, &argmax, vocab_);
  if (!logits.defined()) {
    for (Sequence* s : rows) fail(*s->request, EngineError{EngineErrc::kForwardFailed, "generation failed: " + error});
    remove_done();
    return true;
  }
  const int64_t stride = logits.size(1);
  const float* base = logits.data_ptr<float>();
  std::vector<Draw> draws;
  size_t row = 0, picked = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].want_logits) continue;
    Sequence& s = *rows[i];
    if (inputs[i].argmax_only) {
      const int32_t id = argmax[picked++];
      if (!s.request->done) draws.push_back(Draw{&s, nullptr, id, SampleStatus::kOk, {}});
      continue;
    }
    const float* l = base + static_cast<int64_t>(row++) * stride;
    if (s.request->done) continue;
    if (s.extra_choices > 0 && s.generated() == 0) fork(s, l, draws);
    draws.push_back(Draw{&s, l, -1, SampleStatus::kOk, {}});
  }
  // Each sequence draws from its own sampler, so the draws run in parallel;
  // their results are then emitted in order on this thread.
  kernels::parallel_for(static_cast<int>(draws.size()), [&](int i) {
    thread_local SamplerScratch scratch;
    Draw& d = draws[static_cast<size_t>(i)];
    d.status = d.logits != nullptr ? d.sequence->sampler.sample(d.logits, &d.result, &scratch)
                                   : d.sequence->sampler.take_argmax(d.argmax, &d.result);
  });
  for (Draw& d : draws) {
    if (!d.sequence->request->done) emit(*d.sequence, d);
  }
  remove_done();
  return true;
}

void BatchRunner::fork(Sequence& primary, const float* logits, std::vector<Draw>& draws) {
  // The other choices start from a copy of the prompt's KV (room for a block
  // more, as admit() gives) and draw from the same logits.
  const int64_t room = std::min<int64_t>(primary.kv.length + config_.schedule.block_size,
                                         primary.prompt_len + primary.request->job.max_tokens);
  const int32_t extra = primary.extra_choices;
  primary.extra_choices = 0;
  for (int32_t c = 1; c <= extra; ++c) {
    auto s = std::make_unique<Sequence>(primary.request, static_cast<uint32_t>(c), vocab_, tokenizer_);
    s->id = next_id_++;
    s->arrival = primary.arrival;
    s->tokens = primary.tokens;
    s->prompt_len = primary.prompt_len;
    s->running = true;
    s->kv = model_.copy_cache(primary.kv, room);
    draws.push_back(Draw{s.get(), logits, -1, SampleStatus::kOk, {}});
    sequences_.push_back(std::move(s));
  }
}

void BatchRunner::emit(Sequence& s, const Draw& d) {
  Request& r = *s.request;
  if (d.status != SampleStatus::kOk) {
    fail(r, EngineError{EngineErrc::kNumeric, "the model produced no finite logits"});
    return;
  }
  const SampleResult& result = d.result;
  ++r.usage.completion_tokens;
  const bool end_id = std::find(r.end_ids.begin(), r.end_ids.end(), result.token) != r.end_ids.end();
  if (end_id && !r.job.include_stop) {
    finish(s, "stop");
    return;
  }
  bool stopped = false;
  const bool may_stop = s.generated() + 1 > r.job.sampling.min_tokens;
  if (auto event = s.emitter.token(result.token, result, &stopped, may_stop)) r.out.event(s.choice, std::move(*event));
  if (stopped) {
    finish(s, "");  // the emitter sent the finish event
  } else if (end_id) {
    finish(s, "stop");
  } else if (s.generated() + 1 >= r.job.max_tokens) {
    finish(s, "length");
  } else {
    s.tokens.push_back(result.token);
  }
}

void BatchRunner::finish(Sequence& s, const std::string& finish_reason) {
  Request& r = *s.request;
  if (!finish_reason.empty()) r.out.event(s.choice, s.emitter.finish(finish_reason));
  if (kv_reuse_ && s.kv.length > 0) {
    // Prompt + completion tokens with KV: the next turn re-sends them.
    const std::vector<int32_t> computed(s.tokens.begin(), s.tokens.begin() + s.kv.length);
    kv_reuse_->keep(s.tenant(), computed, s.kv);
  }
  s.done = true;
  s.kv = KvCache{};
  r.out.finish_choice(s.choice);
  if (--r.unfinished == 0) {
    if (before_complete_) before_complete_();
    r.out.complete(r.usage, fingerprint_);
    r.done = true;
  }
}

void BatchRunner::fail(Request& r, const EngineError& error) {
  r.out.fail(error);
  r.done = true;
}

}  // namespace reprox::engine
