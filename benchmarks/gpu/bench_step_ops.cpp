// One decode step of the model, apart from the engine: how many libtorch
// operations it issues and how long it takes, at several batch sizes.
//
// On a GPU every operation is at least one kernel launch, and at small
// batches the launches, not the weight bytes, bound a step; the operation
// count is the figure that can be measured without a GPU. It counts the
// top-level ATen calls of one forward_batch() (nested calls inside an
// operation are not counted) that are not views (view, narrow, select,
// transpose, ...: no kernel). The anchor for the time is the device's copy
// bandwidth measured in the same run: weight bytes / bandwidth is the least a
// step can take.
//
//   reprox_bench_step_ops [--model DIR | --shape tiny|smollm2|llama1b] [--device cpu|cuda]
//                         [--dtype float32|bfloat16|float16] [--mode fast|strict]
//                         [--batches 1,8,32] [--context 64] [--steps 10] [--threads N]
//                         [--kv-slots N] [--static-decode 0|1] [--joining N] [--check-cpu N]
// --kv-slots N keeps the caches in N slots (Model::reserve_kv_slots), as the
// engine does on a GPU; 0: caches of their own; default: the largest batch
// on a GPU, 0 on the CPU (as the engine). --static-decode 0|1: with slots,
// decode steps at fixed shapes (Model::set_static_decode; CUDA graphs on a
// GPU); default: as the model sets it (on where it has CUDA graphs).
// --joining N: every measured step also carries the prompt (N tokens) of a
// sequence that joins the batch, as in serving where requests keep coming:
// the decode rows in slots then still attend as one group, the prompt alone.
// --check-cpu N: whether the model computes the right thing on its device.
// Four sequences take N decode steps on the device (as configured: slots,
// fixed shapes, CUDA graphs) and in strict float32 mode on the CPU, fed the
// same tokens (the CPU's argmax), and the logits are compared: the speed
// figures mean nothing if these are far apart.
#include <ATen/record_function.h>
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/cuda_graph.hpp"
#include "engine/model/model.hpp"
#include "engine/runtime/device_probe.hpp"
#include "engine/tiny/make_tiny_model.hpp"

using namespace reprox::engine;

namespace {

thread_local int depth = 0;
thread_local int64_t counted = 0;

bool is_view(const char* name) {
  static const char* const views[] = {"aten::view",      "aten::narrow",    "aten::slice",  "aten::select",
                                      "aten::transpose", "aten::unsqueeze", "aten::expand", "aten::as_strided",
                                      "aten::t",         "aten::alias",     "aten::detach", "aten::_reshape_alias",
                                      "aten::reshape",   "aten::squeeze",   "aten::permute"};
  for (const char* v : views) {
    if (std::strcmp(name, v) == 0) return true;
  }
  return false;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (depth++ == 0 && !is_view(fn.name())) ++counted;
  return nullptr;
}
void on_end(const at::RecordFunction&, at::ObserverContext*) { --depth; }

struct Flags {
  std::string model, shape = "tiny", device = "cpu", dtype = "float32", mode = "fast", batches = "1,8,32";
  int64_t context = 64, steps = 10, kv_slots = -1, static_decode = -1, joining = 0, check_cpu = 0;
  int threads = 0;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--model") f.model = v;
    else if (flag == "--shape") f.shape = v;
    else if (flag == "--device") f.device = v;
    else if (flag == "--dtype") f.dtype = v;
    else if (flag == "--mode") f.mode = v;
    else if (flag == "--batches") f.batches = v;
    else if (flag == "--context") f.context = std::stoll(v);
    else if (flag == "--steps") f.steps = std::stoll(v);
    else if (flag == "--threads") f.threads = std::stoi(v);
    else if (flag == "--kv-slots") f.kv_slots = std::stoll(v);
    else if (flag == "--static-decode") f.static_decode = std::stoll(v);
    else if (flag == "--joining") f.joining = std::stoll(v);
    else if (flag == "--check-cpu") f.check_cpu = std::stoll(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return f;
}

// A random Llama-shaped model in a temporary folder (no tokenizer files).
std::string make_shape(const std::string& shape) {
  TinyModelOptions o;
  o.out_dir = (std::filesystem::temp_directory_path() / ("reprox-step-ops-" + shape)).string();
  o.arch = "llama";
  o.write_tokenizer = false;
  o.dtype = "bf16";
  o.max_positions = 2048;
  struct Shape {
    const char* name;
    int64_t hidden, layers, heads, kv_heads, intermediate, vocab;
  };
  static const Shape shapes[] = {{"tiny", 256, 4, 8, 2, 512, 32000},
                                 {"smollm2", 576, 30, 9, 3, 1536, 49152},
                                 {"llama1b", 2048, 16, 32, 8, 8192, 32000}};
  const Shape* s = nullptr;
  for (const Shape& candidate : shapes) {
    if (shape == candidate.name) s = &candidate;
  }
  if (s == nullptr) {
    std::fprintf(stderr, "unknown shape %s (tiny, smollm2, llama1b)\n", shape.c_str());
    std::exit(2);
  }
  o.hidden = s->hidden;
  o.layers = s->layers;
  o.heads = s->heads;
  o.kv_heads = s->kv_heads;
  o.intermediate = s->intermediate;
  o.vocab_size = s->vocab;
  make_tiny_model(o);
  return o.out_dir;
}

struct Step {
  int64_t ops = 0;
  double ms = 0;
};

// `batch` sequences of `context` tokens, then `steps` decode steps of all of them together.
Step measure(const Model& model, int64_t batch, const Flags& f) {
  std::vector<KvCache> caches;
  for (int64_t b = 0; b < batch; ++b) caches.push_back(model.new_cache(f.context + f.steps + 2));
  std::vector<BatchInput> inputs(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < f.context; ++j) inputs[b].tokens.push_back(static_cast<int32_t>(300 + (b * 31 + j * 17) % 20000));
    inputs[b].kv = &caches[b];
  }
  std::string error;
  if (!model.forward_batch(inputs, &error).defined()) throw std::runtime_error(error);
  for (auto& in : inputs) in.tokens = {400};
  // With --joining, a fresh sequence's prompt rides along in every step.
  KvCache joiner;
  const auto step = [&] {
    if (f.joining > 0) {
      joiner = model.new_cache(f.joining + 1);
      inputs.resize(static_cast<size_t>(batch) + 1);
      inputs.back().tokens.assign(static_cast<size_t>(f.joining), 500);
      inputs.back().kv = &joiner;
    }
    model.forward_batch(inputs);
  };
  step();  // warm-up step
  counted = 0;
  auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(false));
  step();
  at::removeCallback(handle);
  Step out;
  out.ops = counted;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < f.steps; ++s) step();  // logits come back to the CPU: synchronous
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / f.steps;
  return out;
}

// Whether libtorch's matrix product gives a row the same bits whatever the
// other rows: row 0 of x @ w^T for x of m rows, x [m, in] and w [out, in] in
// the model's dtype on its device. A strict mode on the device would need
// one of: products that ignore m (then every row count is exact), or every
// step padded to one row count (then only that padding is needed; its cost
// is print_padding_cost's line).
void matmul_invariance(const Flags& f, int64_t in, int64_t out) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(f.device);
  torch::manual_seed(7);
  const torch::ScalarType dtype = f.dtype == "bfloat16" ? torch::kBFloat16
                                  : f.dtype == "float16" ? torch::kFloat16
                                                         : torch::kFloat32;
  const torch::Tensor w = torch::randn({out, in}, opts).to(dtype);
  const torch::Tensor rows = torch::randn({256, in}, opts).to(dtype);
  const torch::Tensor alone = torch::linear(rows.narrow(0, 0, 1), w);
  std::string differ;
  for (int64_t m : {2, 4, 8, 16, 32, 64, 128, 256}) {
    if (!torch::equal(torch::linear(rows.narrow(0, 0, m), w).narrow(0, 0, 1), alone)) {
      differ += (differ.empty() ? "" : ", ") + std::to_string(m);
    }
  }
  const torch::Tensor other = torch::cat({rows.narrow(0, 0, 1), torch::randn({31, in}, opts).to(dtype)}, 0);
  const bool padded_same = torch::equal(torch::linear(other, w).narrow(0, 0, 1),
                                        torch::linear(rows.narrow(0, 0, 32), w).narrow(0, 0, 1));
  std::printf("matmul [m, %lld] x [%lld, %lld]^T, row 0 against m = 1: %s; at m = 32 with other rows: %s\n",
              static_cast<long long>(in), static_cast<long long>(out), static_cast<long long>(in),
              differ.empty() ? "the same bits for m up to 256" : ("differs at m = " + differ).c_str(),
              padded_same ? "the same bits" : "differs");
}

// What batch invariance would cost if it came from padding: were every
// decode step run at the largest batch measured (padding rows ignored), each
// row's products would have one shape whatever its neighbours (whether that
// gives the same bits is matmul_invariance's "at m = 32 with other rows").
// A smaller batch then pays the largest batch's step.
void print_padding_cost(const std::vector<std::pair<int64_t, Step>>& steps) {
  if (steps.size() < 2) return;
  const auto largest = *std::max_element(steps.begin(), steps.end(),
                                         [](const auto& a, const auto& b) { return a.first < b.first; });
  std::printf("every step padded to %lld rows (%.3f ms):", static_cast<long long>(largest.first), largest.second.ms);
  for (const auto& [batch, step] : steps) {
    if (batch == largest.first) continue;
    std::printf(" %.2fx the batch-%lld step;", largest.second.ms / step.ms, static_cast<long long>(batch));
  }
  std::printf("\n");
}

// The model on its device against strict float32 on the CPU (--check-cpu):
// 4 sequences of f.context prompt tokens, then f.check_cpu decode steps of
// all four, every step fed the CPU's argmax. Prints the largest and the mean
// |difference| of the logits and how often the argmax agrees.
void check_against_cpu(const Model& model, const std::string& dir, const Flags& f) {
  LoadOptions lo;
  lo.numeric_mode = "strict";
  lo.threads = f.threads;
  lo.progress = false;
  const auto reference = Model::load(dir, lo);
  constexpr int64_t kSequences = 4;
  std::vector<KvCache> on_device, on_cpu;
  std::vector<BatchInput> device_inputs(kSequences), cpu_inputs(kSequences);
  for (int64_t b = 0; b < kSequences; ++b) {
    on_device.push_back(model.new_cache(f.context + f.check_cpu + 2));
    on_cpu.push_back(reference->new_cache(f.context + f.check_cpu + 2));
  }
  for (int64_t b = 0; b < kSequences; ++b) {
    for (int64_t j = 0; j < f.context; ++j) {
      device_inputs[b].tokens.push_back(static_cast<int32_t>(300 + (b * 53 + j * 29) % 20000));
    }
    cpu_inputs[b].tokens = device_inputs[b].tokens;
    device_inputs[b].kv = &on_device[b];
    cpu_inputs[b].kv = &on_cpu[b];
  }
  double largest = 0, sum = 0;
  int64_t values = 0, agree = 0, rows = 0;
  std::string error;
  for (int64_t step = 0; step <= f.check_cpu; ++step) {
    const torch::Tensor got = model.forward_batch(device_inputs, &error);
    const torch::Tensor want = reference->forward_batch(cpu_inputs, &error);
    if (!got.defined() || !want.defined()) throw std::runtime_error(error);
    const torch::Tensor diff = (got - want).abs();
    largest = std::max(largest, diff.max().item<double>());
    sum += diff.sum().item<double>();
    values += diff.numel();
    const torch::Tensor next = want.argmax(1);
    agree += got.argmax(1).eq(next).sum().item<int64_t>();
    rows += kSequences;
    for (int64_t b = 0; b < kSequences; ++b) {
      device_inputs[b].tokens = {static_cast<int32_t>(next[b].item<int64_t>())};
      cpu_inputs[b].tokens = device_inputs[b].tokens;
    }
  }
  std::printf("against strict float32 on the CPU (%lld sequences, the prompt and %lld decode steps): logits differ by "
              "at most %.4f, %.5f on average; the same argmax in %lld of %lld rows\n",
              static_cast<long long>(kSequences), static_cast<long long>(f.check_cpu), largest,
              sum / static_cast<double>(std::max<int64_t>(1, values)), static_cast<long long>(agree),
              static_cast<long long>(rows));
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  const std::string dir = f.model.empty() ? make_shape(f.shape) : f.model;
  LoadOptions lo;
  lo.device = f.device;
  lo.dtype = f.dtype;
  lo.numeric_mode = f.mode;
  lo.threads = f.threads;
  lo.progress = false;
  const auto model = Model::load(dir, lo);
  int64_t slots = f.kv_slots;
  if (slots < 0) slots = 0;
  if (f.kv_slots < 0 && f.device != "cpu") {
    std::stringstream all(f.batches);
    for (std::string item; std::getline(all, item, ',');) slots = std::max<int64_t>(slots, std::stoll(item));
  }
  if (slots > 0) model->reserve_kv_slots(slots, f.context + f.steps + 2);
  if (slots > 0 && f.static_decode >= 0) model->set_static_decode(f.static_decode == 1);
  const double bandwidth = device_copy_bandwidth(f.device, size_t{256} << 20);
  const double bound_ms = 1e3 * static_cast<double>(model->weight_bytes()) / bandwidth;
  if (f.joining > 0) std::printf("every step also carries a joining sequence's prompt of %lld tokens\n",
                                 static_cast<long long>(f.joining));
  std::printf("%s on %s, %s mode, %s (%s); %lld layers; KV slots %lld%s; weights %.1f MiB; copy bandwidth %.1f "
              "GB/s; weight-read bound %.3f ms per step\n",
              f.model.empty() ? f.shape.c_str() : dir.c_str(), f.device.c_str(), f.mode.c_str(), f.dtype.c_str(),
              model->numeric_mode_id().c_str(), static_cast<long long>(model->config().n_layers),
              static_cast<long long>(slots),
              model->static_decode() ? (CudaGraph::available() && f.device != "cpu" ? ", CUDA graphs" : ", fixed shapes")
                                     : "",
              model->weight_bytes() / 1048576.0, bandwidth / 1e9, bound_ms);
  std::printf("| batch | ATen calls per step | per layer | ms per step | tok/s | step vs bound |\n|---|---|---|---|---|---|\n");
  std::stringstream ss(f.batches);
  c10::InferenceMode guard;
  std::vector<std::pair<int64_t, Step>> steps;
  for (std::string item; std::getline(ss, item, ',');) {
    const int64_t batch = std::stoll(item);
    const Step s = measure(*model, batch, f);
    steps.emplace_back(batch, s);
    std::printf("| %lld | %lld | %.1f | %.3f | %.1f | %.2fx |\n", static_cast<long long>(batch),
                static_cast<long long>(s.ops), static_cast<double>(s.ops) / model->config().n_layers, s.ms,
                1e3 * batch / s.ms, s.ms / bound_ms);
  }
  print_padding_cost(steps);
  if (!model->graph_failure().empty()) std::printf("CUDA graphs: the recording failed (%s)\n", model->graph_failure().c_str());
  const ModelConfig& c = model->config();
  matmul_invariance(f, c.hidden, c.intermediate);
  matmul_invariance(f, c.hidden, c.vocab_size);
  if (f.check_cpu > 0) check_against_cpu(*model, dir, f);
  if (f.model.empty()) std::filesystem::remove_all(dir);
  return 0;
}
