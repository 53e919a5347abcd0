#include "engine/scheduler/scheduler.hpp"

#include <algorithm>
#include <numeric>

namespace reprox::engine::sched {

std::string validate_scheduler_config(const SchedulerConfig& c) {
  if (c.block_size < 1) return "scheduler block_size must be at least 1";
  if (c.max_tokens_per_step < 1) return "scheduler max_tokens_per_step must be at least 1";
  if (c.max_batch_size < 1) return "scheduler max_batch_size must be at least 1";
  if (c.chunk_size < 1) return "scheduler chunk_size must be at least 1";
  return "";
}

int32_t blocks_for_tokens(int64_t tokens, int32_t block_size) {
  if (tokens <= 0) return 0;
  return static_cast<int32_t>((tokens + block_size - 1) / block_size);
}

int32_t peak_blocks(const SequenceState& s, int32_t block_size, bool forks_copy_prompt) {
  const int64_t kv_tokens = s.prompt_len + std::max<int64_t>(s.max_tokens, 1) - 1;  // the last token is never fed
  if (s.extra_choices <= 0) return blocks_for_tokens(kv_tokens, block_size);
  if (forks_copy_prompt) return (s.extra_choices + 1) * blocks_for_tokens(kv_tokens, block_size);
  const int64_t shared = s.prompt_len / block_size;
  return static_cast<int32_t>(shared) +
         (s.extra_choices + 1) * blocks_for_tokens(kv_tokens - shared * block_size, block_size);
}

namespace {

bool earlier(const SequenceState& a, const SequenceState& b) {
  return a.arrival != b.arrival ? a.arrival < b.arrival : a.id < b.id;
}

std::vector<size_t> arrival_order(const std::vector<SequenceState>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return earlier(v[a], v[b]); });
  return order;
}

// Blocks a step needs beyond the sequence's own growth, for the siblings
// forked when it samples its first token: a copy of its `computed` tokens
// each (forks_copy_prompt), or of the partial last prompt block only.
int32_t fork_blocks(const SequenceState& s, bool samples, int64_t computed, const SchedulerConfig& c) {
  if (!samples || s.generated != 0 || s.extra_choices <= 0) return 0;
  if (c.forks_copy_prompt) return s.extra_choices * blocks_for_tokens(computed, c.block_size);
  return s.prompt_len % c.block_size != 0 ? s.extra_choices : 0;
}

class Planner {
 public:
  Planner(const SchedulerState& state, const SchedulerConfig& config)
      : state_(state), config_(config), free_(state.free_blocks), budget_(config.max_tokens_per_step),
        slots_(config.max_batch_size), running_order_(arrival_order(state.running)),
        alive_(state.running.size(), true), plan_(state.running.size()) {}

  ScheduleOutput run() {
    bool admitting = true;
    for (const Candidate& c : fair_order()) {
      if (c.phase == kAdmission) {
        admitting = admitting && admit(c.index);
        continue;
      }
      const SequenceState& s = state_.running[c.index];
      const int64_t remaining = s.length() - s.computed_len;
      try_running(c.index, c.phase == kDecode ? 1 : std::min({remaining, config_.chunk_size, budget_}));
    }
    return finish();
  }

 private:
  enum Phase { kDecode = 0, kChunk = 1, kAdmission = 2 };
  struct Candidate {
    size_t index;  // into running, or waiting for kAdmission
    Phase phase;
    uint32_t rank = 0;  // among its request's candidates, by id
    const SequenceState* s;
  };

  // Every unfinished sequence, in the order it may take a slot: round-robin
  // across requests (sequences of one request share an arrival), so every
  // request's k-th sequence comes before any request's (k+1)-th; then
  // decodes, prefill chunks, admissions; then arrival order. With one
  // sequence per request that is decodes, chunks, admissions, each in
  // arrival order.
  std::vector<Candidate> fair_order() const {
    std::vector<Candidate> order;
    for (size_t i = 0; i < state_.running.size(); ++i) {
      const SequenceState& s = state_.running[i];
      if (!s.finished()) order.push_back(Candidate{i, s.length() - s.computed_len == 1 ? kDecode : kChunk, 0, &s});
    }
    for (size_t i = 0; i < state_.waiting.size(); ++i)
      if (!state_.waiting[i].finished()) order.push_back(Candidate{i, kAdmission, 0, &state_.waiting[i]});
    std::stable_sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) { return earlier(*a.s, *b.s); });
    for (size_t k = 1; k < order.size(); ++k)
      if (order[k].s->arrival == order[k - 1].s->arrival) order[k].rank = order[k - 1].rank + 1;
    std::stable_sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.phase < b.phase;
    });
    return order;
  }

  struct Planned {
    bool scheduled = false;
    ScheduledSequence step;
  };

  void try_running(size_t i, int64_t n) {
    const SequenceState& s = state_.running[i];
    if (!alive_[i] || n <= 0 || n > budget_ || slots_ == 0) return;
    const bool samples = s.computed_len + n == s.length();
    const int32_t need = std::max(0, blocks_for_tokens(s.computed_len + n, config_.block_size) - s.blocks_held) +
                         fork_blocks(s, samples, s.computed_len + n, config_);
    while (need > free_) {
      const size_t victim = latest_alive();
      preempt(victim);
      if (victim == i) return;
    }
    Planned& p = plan_[i];
    p.scheduled = true;
    p.step = ScheduledSequence{s.id, false, s.computed_len, n, need, samples,
                               samples && s.generated == 0 ? s.extra_choices : 0};
    take(n, need);
  }

  size_t latest_alive() const {
    for (auto it = running_order_.rbegin(); it != running_order_.rend(); ++it)
      if (alive_[*it]) return *it;
    return running_order_.front();  // unreachable: the caller is alive
  }

  void preempt(size_t i) {
    alive_[i] = false;
    out_.preempted.push_back(state_.running[i].id);
    free_ += state_.running[i].releasable_blocks;
    Planned& p = plan_[i];
    if (p.scheduled) {  // undo its work this step
      free_ += p.step.new_blocks;
      budget_ += p.step.num_tokens;
      ++slots_;
      p.scheduled = false;
    }
  }

  void take(int64_t tokens, int32_t blocks) {
    free_ -= blocks;
    budget_ -= tokens;
    --slots_;
  }

  // Admits waiting sequence i if it fits; false when it does not, after
  // which nobody waiting is admitted this step (first come, first served:
  // nobody overtakes it), nor after a preemption.
  bool admit(size_t i) {
    const SequenceState& s = state_.waiting[i];
    if (!out_.preempted.empty() || slots_ == 0 || budget_ == 0) return false;
    const int64_t start = std::clamp<int64_t>(s.cached_len, 0, s.length() - 1) / config_.block_size * config_.block_size;
    const int64_t n = std::min({s.length() - start, config_.chunk_size, budget_});
    const bool samples = start + n == s.length();
    const int32_t cached_blocks = static_cast<int32_t>(start / config_.block_size);
    const int32_t need = blocks_for_tokens(start + n, config_.block_size) - cached_blocks +
                         fork_blocks(s, samples, start + n, config_);
    // Locking the cached prefix takes its unreferenced blocks out of the allocatable count.
    const int32_t cost = need + (start > 0 ? s.cached_unreferenced_blocks : 0);
    if (cost > free_) return false;
    admitted_.push_back(ScheduledSequence{s.id, true, start, n, need, samples,
                                          samples && s.generated == 0 ? s.extra_choices : 0});
    admitted_keys_.push_back(&s);
    free_ -= cost - need;
    take(n, need);
    return true;
  }

  ScheduleOutput finish() {
    std::vector<std::pair<const SequenceState*, ScheduledSequence>> all;
    for (size_t i = 0; i < plan_.size(); ++i)
      if (plan_[i].scheduled) all.emplace_back(&state_.running[i], plan_[i].step);
    for (size_t i = 0; i < admitted_.size(); ++i) all.emplace_back(admitted_keys_[i], admitted_[i]);
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return earlier(*a.first, *b.first); });
    for (auto& [key, step] : all) {
      out_.num_tokens += step.num_tokens;
      out_.new_blocks += step.new_blocks;
      if (step.admitted) ++out_.admitted;
      out_.scheduled.push_back(step);
    }
    return std::move(out_);
  }

  const SchedulerState& state_;
  const SchedulerConfig& config_;
  int64_t free_;
  int64_t budget_;
  int32_t slots_;
  std::vector<size_t> running_order_;
  std::vector<bool> alive_;
  std::vector<Planned> plan_;
  std::vector<ScheduledSequence> admitted_;
  std::vector<const SequenceState*> admitted_keys_;
  ScheduleOutput out_;
};

}  // namespace

ScheduleOutput schedule(const SchedulerState& state, const SchedulerConfig& config) {
  if (!validate_scheduler_config(config).empty()) return {};
  return Planner(state, config).run();
}

}  // namespace reprox::engine::sched
