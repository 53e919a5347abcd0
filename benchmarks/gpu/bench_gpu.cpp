// The engine on an accelerator: decode speed against the weight-read bound,
// time to first token, and whether answers keep their bytes.
//
// The anchor is the device itself, measured in the same run: its copy
// bandwidth (device_probe.hpp) turns the model's weight bytes into the time
// one decode step needs at least, reading every weight once. Figures:
//   - decode tok/s at each concurrency C (C requests submitted together;
//     decode counts only the tokens streamed after every request has its
//     first one, over the time from then to the last answer),
//     at C = 1 also as a fraction of the bound, at C > 1 against C = 1;
//   - time to first token (median over the round's requests);
//   - digests (SHA-256 of the answers' bytes) of a fixed set of requests run
//     one at a time and all together: a second process that prints the same
//     digests gave the same bytes;
//   - with --compare N: N requests each answered alone and inside a group of
//     --compare-batch submitted together, and how many answers differ.
// Prompts are fixed token ids, temperature 0.8 with a seed per request, and
// end-of-text tokens are banned so every answer runs to its token limit.
// --temperature 0 measures greedy decoding instead: nothing is banned, so
// each draw is the argmax the device picks (step_output.hpp) and only token
// ids leave the device; an answer may then end before its limit.
//
//   reprox_bench_gpu --model DIR [--device cuda] [--dtype bfloat16] [--mode fast]
//                    [--threads T] [--tokens 128] [--prompt 64] [--concurrency 1,8,32]
//                    [--reps 2] [--digest-set 8] [--compare 0] [--compare-batch 32]
//                    [--compare-tokens 16] [--bandwidth-mib 1024] [--cuda-graphs 1]
//                    [--temperature 0.8]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/runtime/device_probe.hpp"
#include "engine/runtime/engine.hpp"
#include "policies/tenant.hpp"

using namespace reprox;
using namespace reprox::engine;

namespace {

using Clock = std::chrono::steady_clock;

struct Answer {
  std::string text;
  int64_t tokens = 0;
  Clock::time_point submitted, first, done;
  std::vector<Clock::time_point> events;  // one per streamed piece (about one per token)
  bool ok = false;
};

// Collects one job's answer. Calls come from the engine thread.
class Collect final : public EngineSink {
 public:
  explicit Collect(Answer* out) : out_(out) {}
  void on_event(GenEvent e) override {
    const Clock::time_point now = Clock::now();
    if (out_->first == Clock::time_point{}) out_->first = now;
    out_->events.push_back(now);
    out_->text += e.delta.content;
  }
  void on_complete(const Usage& u, const std::string&) override {
    out_->tokens = u.completion_tokens;
    out_->done = Clock::now();
    out_->ok = true;
    done_.set_value();
  }
  void on_error(const EngineError& e) override {
    std::fprintf(stderr, "engine error: %s\n", e.message.c_str());
    out_->done = Clock::now();
    done_.set_value();
  }
  std::future<void> future() { return done_.get_future(); }

 private:
  Answer* out_;
  std::promise<void> done_;
};

struct Request {
  std::vector<int32_t> prompt;
  uint64_t seed = 0;
  int64_t max_tokens = 0;
};

struct Setup {
  double temperature = 0.8;
  std::vector<int32_t> banned;  // end-of-text ids, biased away (not when greedy)
  int32_t vocab = 0;
  int64_t prompt_tokens = 64;
};

// Request `index`: fixed ids spread over the vocabulary (no special tokens).
Request make_request(const Setup& s, uint64_t index, int64_t max_tokens) {
  Request r;
  const int32_t span = std::max<int32_t>(1, std::min<int32_t>(s.vocab, 32000) - 300);
  for (int64_t j = 0; j < s.prompt_tokens; ++j) {
    r.prompt.push_back(260 + static_cast<int32_t>((index * 7919 + static_cast<uint64_t>(j) * 104729) % span));
  }
  r.seed = 1000 + index;
  r.max_tokens = max_tokens;
  return r;
}

// Submits every request at once and waits for all answers; exits on refusal.
std::vector<Answer> run_together(Engine& engine, const Setup& s, const std::vector<Request>& requests) {
  std::vector<Answer> answers(requests.size());
  std::vector<std::future<void>> done;
  for (size_t i = 0; i < requests.size(); ++i) {
    EngineJob job;
    job.prompt = requests[i].prompt;
    job.sampling.temperature = s.temperature;
    job.sampling.seed = requests[i].seed;
    for (int32_t id : s.banned) job.sampling.logit_bias.emplace_back(id, -100.0);
    job.max_tokens = requests[i].max_tokens;
    job.tenant = "bench";
    auto sink = std::make_shared<Collect>(&answers[i]);
    done.push_back(sink->future());
    job.sink = sink;
    answers[i].submitted = Clock::now();
    if (auto err = engine.submit(std::move(job))) {
      std::fprintf(stderr, "refused: %s\n", err->message.c_str());
      std::exit(1);
    }
  }
  for (auto& f : done) f.get();
  for (const Answer& a : answers) {
    if (!a.ok) std::exit(1);
  }
  return answers;
}

std::vector<Answer> run_one_at_a_time(Engine& engine, const Setup& s, const std::vector<Request>& requests) {
  std::vector<Answer> answers;
  for (const Request& r : requests) answers.push_back(run_together(engine, s, {r}).front());
  return answers;
}

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Round {
  double decode_tps = 0;   // tokens after the last first token / time from it to the last answer
  double wall_tps = 0;     // all tokens / time from the first submit to the last answer
  double ttft_ms = 0;      // median time to first token
};

Round measure(const std::vector<Answer>& answers) {
  Clock::time_point t0 = answers.front().submitted, all_started = t0, end = t0;
  std::vector<double> ttft;
  int64_t tokens = 0;
  for (const Answer& a : answers) {
    t0 = std::min(t0, a.submitted);
    all_started = std::max(all_started, a.first);
    end = std::max(end, a.done);
    ttft.push_back(seconds(a.submitted, a.first) * 1e3);
    tokens += a.tokens;
  }
  // Decode counts the tokens streamed after every request has its first
  // one: an answer's pieces up to then (at least one) are left out.
  int64_t before = 0;
  for (const Answer& a : answers) {
    const auto n = std::upper_bound(a.events.begin(), a.events.end(), all_started) - a.events.begin();
    before += std::max<int64_t>(1, n);
  }
  const int64_t decode_tokens = tokens - before;
  std::sort(ttft.begin(), ttft.end());
  Round r;
  r.decode_tps = decode_tokens / std::max(1e-9, seconds(all_started, end));
  r.wall_tps = tokens / std::max(1e-9, seconds(t0, end));
  r.ttft_ms = ttft[ttft.size() / 2];
  return r;
}

// The first 16 hex digits of the SHA-256 of the answers' bytes.
std::string digest(const std::vector<Answer>& answers) {
  std::string all;
  for (const Answer& a : answers) all += a.text + '\x1e';
  return policy::sha256_hex(all).substr(0, 16);
}

struct Flags {
  std::string model, device = "cuda", dtype = "bfloat16", mode = "fast", levels = "1,8,32";
  int threads = 0, reps = 2;
  bool cuda_graphs = true;
  int64_t tokens = 128, prompt = 64, digest_set = 8, compare = 0, compare_batch = 32, compare_tokens = 16;
  int64_t bandwidth_mib = 1024;
  double temperature = 0.8;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--model") f.model = v;
    else if (flag == "--device") f.device = v;
    else if (flag == "--dtype") f.dtype = v;
    else if (flag == "--mode") f.mode = v;
    else if (flag == "--concurrency") f.levels = v;
    else if (flag == "--threads") f.threads = std::stoi(v);
    else if (flag == "--reps") f.reps = std::max(1, std::stoi(v));
    else if (flag == "--tokens") f.tokens = std::stoll(v);
    else if (flag == "--prompt") f.prompt = std::stoll(v);
    else if (flag == "--digest-set") f.digest_set = std::stoll(v);
    else if (flag == "--compare") f.compare = std::stoll(v);
    else if (flag == "--compare-batch") f.compare_batch = std::stoll(v);
    else if (flag == "--compare-tokens") f.compare_tokens = std::stoll(v);
    else if (flag == "--bandwidth-mib") f.bandwidth_mib = std::stoll(v);
    else if (flag == "--cuda-graphs") f.cuda_graphs = v != "0";
    else if (flag == "--temperature") f.temperature = std::stod(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (f.model.empty()) {
    std::fprintf(stderr, "--model DIR is required\n");
    std::exit(2);
  }
  return f;
}

std::vector<int64_t> parse_levels(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoll(item));
  return out;
}

// Speed at each concurrency, best of `reps` rounds per level (levels interleaved).
void speed_table(Engine& engine, const Setup& s, const Flags& f, double bound_ms) {
  const std::vector<int64_t> levels = parse_levels(f.levels);
  std::vector<Round> best(levels.size());
  uint64_t next = 100000;  // request indices distinct from the digest and compare sets
  for (int rep = 0; rep < f.reps; ++rep) {
    for (size_t i = 0; i < levels.size(); ++i) {
      std::vector<Request> requests;
      for (int64_t j = 0; j < levels[i]; ++j) requests.push_back(make_request(s, next++, f.tokens));
      const Round r = measure(run_together(engine, s, requests));
      if (r.decode_tps > best[i].decode_tps) best[i] = r;
    }
  }
  std::printf("| concurrency | decode tok/s | vs concurrency 1 | vs bound | wall tok/s | TTFT ms (median) |\n"
              "|---|---|---|---|---|---|\n");
  const double bound_tps = 1e3 / bound_ms;
  for (size_t i = 0; i < levels.size(); ++i) {
    const Round& r = best[i];
    const double per_seq = r.decode_tps / static_cast<double>(levels[i]);
    std::printf("| %lld | %.1f | %.2fx | %.3f | %.1f | %.1f |\n", static_cast<long long>(levels[i]), r.decode_tps,
                r.decode_tps / best[0].decode_tps, per_seq / bound_tps, r.wall_tps, r.ttft_ms);
  }
}

void compare_alone_and_batched(Engine& engine, const Setup& s, const Flags& f) {
  std::vector<Request> requests;
  for (int64_t i = 0; i < f.compare; ++i) requests.push_back(make_request(s, 200000 + i, f.compare_tokens));
  const std::vector<Answer> alone = run_one_at_a_time(engine, s, requests);
  std::vector<Answer> batched;
  for (size_t i = 0; i < requests.size(); i += f.compare_batch) {
    const size_t end = std::min(requests.size(), i + static_cast<size_t>(f.compare_batch));
    const std::vector<Answer> group =
        run_together(engine, s, std::vector<Request>(requests.begin() + i, requests.begin() + end));
    batched.insert(batched.end(), group.begin(), group.end());
  }
  int64_t differ = 0;
  for (size_t i = 0; i < alone.size(); ++i) differ += alone[i].text != batched[i].text ? 1 : 0;
  std::printf("alone vs in groups of %lld: %lld of %lld answers differ (%lld tokens each)\n",
              static_cast<long long>(f.compare_batch), static_cast<long long>(differ),
              static_cast<long long>(alone.size()), static_cast<long long>(f.compare_tokens));
  std::printf("digest compare-alone %s\n", digest(alone).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  EngineOptions o;
  o.model_dir = f.model;
  o.device = f.device;
  o.dtype = f.dtype;
  o.numeric_mode = f.mode;
  o.threads = f.threads;
  o.kv_budget_bytes = 0;
  int64_t widest = f.compare_batch;
  for (int64_t c : parse_levels(f.levels)) widest = std::max(widest, c);
  o.max_batch_size = static_cast<int32_t>(widest);
  o.queue_capacity = static_cast<size_t>(widest) + 8;
  o.max_step_tokens = 4096;
  o.working_kv_bytes = int64_t{16} << 30;
  o.cuda_graphs = f.cuda_graphs;
  Engine engine(o);
  Setup s;
  s.prompt_tokens = f.prompt;
  s.vocab = static_cast<int32_t>(engine.tokenizer()->vocab_size());
  s.temperature = f.temperature;
  for (const char* t : {"<|im_end|>", "<|endoftext|>", "</s>", "<|end|>", "<|eot_id|>"}) {
    if (auto id = engine.tokenizer()->token_to_id(t); id && f.temperature > 0) s.banned.push_back(*id);
  }
  std::sort(s.banned.begin(), s.banned.end());
  const double bandwidth = device_copy_bandwidth(f.device, static_cast<size_t>(f.bandwidth_mib) << 20);
  const double bound_ms = 1e3 * static_cast<double>(engine.weight_bytes()) / bandwidth;
  std::printf("model %s on %s, %s mode, %s, CUDA graphs %s, prompt %lld tokens, %lld tokens per answer, "
              "temperature %g%s\n",
              f.model.c_str(), f.device.c_str(), f.mode.c_str(), f.dtype.c_str(), f.cuda_graphs ? "on" : "off",
              static_cast<long long>(f.prompt), static_cast<long long>(f.tokens), f.temperature,
              f.temperature > 0 ? "" : " (greedy: the argmax is taken on the device)");
  std::printf("weights %.1f MiB; device copy bandwidth %.1f GB/s (read + write); weight-read bound %.3f ms per "
              "decode step (%.0f tok/s)\n",
              engine.weight_bytes() / 1048576.0, bandwidth / 1e9, bound_ms, 1e3 / bound_ms);
  std::printf("system_fingerprint %s\n", engine.system_fingerprint().c_str());
  run_together(engine, s, {make_request(s, 99999, 8), make_request(s, 99998, 8)});  // warm-up
  speed_table(engine, s, f, bound_ms);
  std::vector<Request> set;
  for (int64_t i = 0; i < f.digest_set; ++i) set.push_back(make_request(s, i, f.tokens));
  const std::vector<Answer> alone = run_one_at_a_time(engine, s, set);
  const std::vector<Answer> together = run_together(engine, s, set);
  std::printf("digest alone %s\n", digest(alone).c_str());
  std::printf("digest together %s\n", digest(together).c_str());
  int64_t differ = 0;
  for (size_t i = 0; i < set.size(); ++i) differ += alone[i].text != together[i].text ? 1 : 0;
  std::printf("alone vs together (%lld requests): %lld differ\n", static_cast<long long>(set.size()),
              static_cast<long long>(differ));
  if (f.compare > 0) compare_alone_and_batched(engine, s, f);
  return 0;
}
