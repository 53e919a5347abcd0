// Reproducibility suite driver. Runs every case of cases.json through the
// local backend exactly as `reprox serve` would (same parser, same defaults),
// renders each answer with the server's renderer, and hashes the bytes of
// its "choices" array. --write stores the hashes; --check compares them in
// this fresh process and also checks that changing the seed changes sampled
// outputs. --weights picks the engine's weight storage (auto, f32, f16,
// bf16, q8), --numeric-mode (strict, fast) and --dtype (float32, bfloat16,
// float16) how it computes; each combination has its own committed hash
// file. Fast mode's bits on the CPU depend on libtorch's kernels, so its
// files are per CPU class: "{cpu}" in the --check or --write path stands
// for engine::libtorch_cpu_class(). A class with no committed file is checked
// against a second process instead (same bytes run to run on one host, the
// promise fast mode makes). --actual also writes this run's hashes. The
// engine runs on one thread. Exit 0 on success.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>

#include "engine/model/libtorch_cpu_class.hpp"
#include "proxy/backend/local_backend.hpp"
#include "policies/canonical_key.hpp"
#include "policies/tenant.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "proxy/api/chat_response.hpp"

namespace {

using namespace reprox;

constexpr uint64_t kDefaultSeed = 42;
constexpr int64_t kDefaultMaxTokens = 256;

class CollectingSink final : public GenerationSink {
 public:
  explicit CollectingSink(uint32_t n) { gen_.n_choices = n; }
  void on_event(GenEvent e) override { gen_.events.push_back(std::move(e)); }
  void on_complete(const Usage& u, const std::string& fp) override {
    gen_.usage = u;
    gen_.system_fingerprint = fp;
    done_.set_value(true);
  }
  void on_error(const api::ApiError& e) override {
    error_ = e.to_json();
    done_.set_value(false);
  }
  std::promise<bool> done_;
  Generation gen_;
  std::string error_;
};

// The bytes of the answer's "choices" array as the server renders them.
std::string choices_bytes(const Generation& gen) {
  api::ResponseMeta meta{"chatcmpl-repro", 0, "m", gen.system_fingerprint};
  std::string body = api::render_completion(meta, gen);
  auto start = body.find("\"choices\":");
  auto end = body.rfind(",\"usage\":");
  return body.substr(start, end - start);
}

std::optional<std::string> run_case(LocalBackend& backend, const std::string& body, std::optional<uint64_t> seed_override,
                                    std::string* error) {
  auto parsed = api::parse_chat_request(body);
  if (!parsed) {
    *error = parsed.error.to_json();
    return std::nullopt;
  }
  auto req = std::make_shared<BackendRequest>();
  req->chat = std::move(*parsed.request);
  req->model_id = backend.models().front().id;
  req->seed = seed_override ? *seed_override : req->chat.seed.value_or(kDefaultSeed);
  req->max_tokens = policy::effective_max_tokens(req->chat, kDefaultMaxTokens);
  auto sink = std::make_shared<CollectingSink>(static_cast<uint32_t>(req->chat.n));
  auto done = sink->done_.get_future();
  api::ApiError err;
  auto handle = backend.generate(req, sink, &err);
  if (!handle) {
    *error = err.to_json();
    return std::nullopt;
  }
  if (!done.get()) {
    *error = sink->error_;
    return std::nullopt;
  }
  return choices_bytes(sink->gen_);
}

void write_hashes(const std::string& path, const std::vector<std::string>& hashes) {
  std::ofstream out(path);
  out << "[\n";
  for (size_t i = 0; i < hashes.size(); ++i) out << "  \"" << hashes[i] << "\"" << (i + 1 < hashes.size() ? ",\n" : "\n");
  out << "]\n";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs this tool again in a new process with --check `hashes_path` in place
// of the original --check value; returns its exit status.
int check_in_second_process(int argc, char** argv, const std::string& hashes_path) {
  std::string cmd = shell_quote(argv[0]);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--actual") continue;
    cmd += " " + shell_quote(a) + " " + shell_quote(a == "--check" ? hashes_path : argv[i + 1]);
  }
  const int rc = std::system(cmd.c_str());
  return rc == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, cases_path, write_path, check_path, actual_path, weights = "auto";
  std::string numeric_mode = "strict", dtype = "float32";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--model") model = argv[i + 1];
    else if (a == "--cases") cases_path = argv[i + 1];
    else if (a == "--write") write_path = argv[i + 1];
    else if (a == "--check") check_path = argv[i + 1];
    else if (a == "--actual") actual_path = argv[i + 1];
    else if (a == "--weights") weights = argv[i + 1];
    else if (a == "--numeric-mode") numeric_mode = argv[i + 1];
    else if (a == "--dtype") dtype = argv[i + 1];
  }
  if (model.empty() || cases_path.empty() || (write_path.empty() == check_path.empty())) {
    std::cerr << "usage: reprox_repro --model DIR --cases cases.jsonl [--weights MODE] [--numeric-mode strict|fast] "
                 "[--dtype float32|bfloat16|float16] [--actual FILE] (--write|--check) expected.json\n";
    return 2;
  }
  // One request body per line, sent verbatim (64-bit seeds stay exact).
  std::vector<std::string> lines;
  json::Array parsed_cases;
  {
    std::ifstream in(cases_path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      json::Value c;
      if (auto err = json::parse(line, c); err || !c.is_object()) {
        std::cerr << "bad case line " << lines.size() << ": " << err.message << "\n";
        return 2;
      }
      lines.push_back(line);
      parsed_cases.push_back(c);
    }
  }
  const json::Value cases(std::move(parsed_cases));
  engine::EngineOptions options;
  options.model_dir = model;
  options.weights = weights;
  options.numeric_mode = numeric_mode;
  options.dtype = dtype;
  LocalBackend backend(options);

  std::vector<std::string> hashes;
  int failures = 0, seed_checked = 0;
  for (size_t i = 0; i < cases.as_array().size(); ++i) {
    const auto& c = cases.as_array()[i];
    std::string body = lines[i], error;
    auto bytes = run_case(backend, body, std::nullopt, &error);
    if (!bytes) {
      std::cerr << "case " << i << ": " << error << "\n";
      return 1;
    }
    hashes.push_back(policy::sha256_hex(*bytes));
    // Same request, same seed: same bytes, every time.
    auto again = run_case(backend, body, std::nullopt, &error);
    if (!again || *again != *bytes) {
      std::cerr << "case " << i << ": a second run in the same process differs\n";
      ++failures;
    }
    // A different seed must change a sampled output of some length.
    const json::Value* t = c.find("temperature");
    const json::Value* mt = c.find("max_tokens");
    bool sampled = !(t && t->as_double() == 0) && !c.find("logit_bias") && mt && mt->as_int() >= 16;
    if (sampled) {
      ++seed_checked;
      auto seed = c.find("seed") ? c.find("seed")->as_uint() : kDefaultSeed;
      auto other = run_case(backend, body, seed + 1, &error);
      if (!other || *other == *bytes) {
        std::cerr << "case " << i << ": seed " << seed + 1 << " gave the same output as seed " << seed << "\n";
        ++failures;
      }
    }
  }
  // "{cpu}" in a hash file's path: this host's libtorch CPU class.
  for (std::string* path : {&write_path, &check_path}) {
    if (const auto at = path->find("{cpu}"); at != std::string::npos) path->replace(at, 5, engine::libtorch_cpu_class());
  }
  if (!actual_path.empty()) write_hashes(actual_path, hashes);
  if (!write_path.empty()) {
    write_hashes(write_path, hashes);
    std::cerr << "wrote " << hashes.size() << " hashes; fingerprint " << backend.fingerprint("") << "\n";
    return failures ? 1 : 0;
  }
  if (!std::filesystem::exists(check_path)) {
    const std::string here = actual_path.empty() ? (std::filesystem::temp_directory_path() /
                                                    ("reprox_repro_" + std::to_string(::getpid()) + ".json")).string()
                                                 : actual_path;
    if (actual_path.empty()) write_hashes(here, hashes);
    std::cout << "no committed hashes for this CPU class (" << check_path << "): checking " << hashes.size()
              << " hashes against a second process\n";
    const int second = check_in_second_process(argc, argv, here);
    if (actual_path.empty()) std::filesystem::remove(here);
    std::cout << failures << " failures in this process; second process " << (second ? "differs" : "agrees") << "\n";
    return failures || second ? 1 : 0;
  }
  std::stringstream expected_text;
  expected_text << std::ifstream(check_path).rdbuf();
  json::Value expected;
  if (auto err = json::parse(expected_text.str(), expected); err || !expected.is_array() ||
      expected.as_array().size() != hashes.size()) {
    std::cerr << "bad expected file " << check_path << "\n";
    return 1;
  }
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (expected.as_array()[i].as_string() != hashes[i]) {
      std::cerr << "case " << i << ": sha256 " << hashes[i] << " != committed " << expected.as_array()[i].as_string() << "\n";
      ++failures;
    }
  }
  std::cout << hashes.size() << " cases, " << seed_checked << " seed-sensitivity checks, " << failures << " failures\n";
  std::cout << (hashes.size() * 2 + seed_checked - failures) << " passed, " << failures << " failed\n";
  return failures ? 1 : 0;
}
