#include "tests/engine/model/reference_model.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include <simdjson.h>

namespace reprox::testref {
namespace {

using Vec = std::vector<double>;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("reference: cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double half_to_double(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 31;
  const int mant = h & 1023;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

double bfloat_to_double(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void read_file_tensors(const std::string& path, std::map<std::string, RefTensor>& out) {
  const std::string bytes = slurp(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian host assumed (x86/arm64)
  simdjson::dom::parser parser;
  simdjson::padded_string header(bytes.data() + 8, n);
  simdjson::dom::object root = parser.parse(header).get_object().value();
  const char* data = bytes.data() + 8 + n;
  for (auto field : root) {
    if (field.key == "__metadata__") continue;
    RefTensor t;
    simdjson::dom::array shape, offsets;
    if (field.value["shape"].get(shape) || field.value["data_offsets"].get(offsets)) {
      throw std::runtime_error("reference: bad header entry in " + path);
    }
    for (auto d : shape) t.shape.push_back(d.get_int64().value());
    const uint64_t begin = offsets.at(0).get_uint64().value();
    const std::string dtype(field.value["dtype"].get_string().value());
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    t.values.resize(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) {
      if (dtype == "F32") {
        float f;
        std::memcpy(&f, data + begin + 4 * i, 4);
        t.values[i] = f;
      } else {
        uint16_t h;
        std::memcpy(&h, data + begin + 2 * i, 2);
        t.values[i] = dtype == "F16" ? half_to_double(h) : bfloat_to_double(h);
      }
    }
    out[std::string(field.key)] = std::move(t);
  }
}

// y = W x (+ b) with W [out, in].
Vec matvec(const RefTensor& W, const Vec& x, const RefTensor* b = nullptr) {
  Vec y(static_cast<size_t>(W.shape[0]));
  for (int64_t o = 0; o < W.shape[0]; ++o) {
    double acc = b ? b->values[o] : 0.0;
    for (int64_t i = 0; i < W.shape[1]; ++i) acc += W.at(o, i) * x[i];
    y[o] = acc;
  }
  return y;
}

// y = x W (+ b) with W [in, out] (GPT-2 Conv1D).
Vec conv1d(const RefTensor& W, const Vec& x, const RefTensor& b) {
  Vec y(b.values);
  for (int64_t i = 0; i < W.shape[0]; ++i) {
    for (int64_t o = 0; o < W.shape[1]; ++o) y[o] += x[i] * W.at(i, o);
  }
  return y;
}

Vec rmsnorm(const Vec& x, const RefTensor& w, double eps, size_t offset = 0, size_t n = 0) {
  if (n == 0) n = x.size();
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[offset + i] * x[offset + i];
  const double scale = 1.0 / std::sqrt(ss / n + eps);
  Vec y(n);
  for (size_t i = 0; i < n; ++i) y[i] = x[offset + i] * scale * w.values[i];
  return y;
}

Vec layernorm(const Vec& x, const RefTensor& w, const RefTensor& b, double eps) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= x.size();
  for (double v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * w.values[i] + b.values[i];
  return y;
}

// Causal multi-head attention over full sequences; q [T][Nq*D], k/v [T][Nkv*D].
std::vector<Vec> attention(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v,
                           int64_t nq, int64_t nkv, int64_t d) {
  const size_t T = q.size();
  std::vector<Vec> out(T, Vec(static_cast<size_t>(nq * d), 0.0));
  for (int64_t h = 0; h < nq; ++h) {
    const int64_t kvh = h / (nq / nkv);
    for (size_t t = 0; t < T; ++t) {
      Vec scores(t + 1);
      double mx = -INFINITY;
      for (size_t j = 0; j <= t; ++j) {
        double s = 0;
        for (int64_t e = 0; e < d; ++e) s += q[t][h * d + e] * k[j][kvh * d + e];
        scores[j] = s / std::sqrt(static_cast<double>(d));
        mx = std::max(mx, scores[j]);
      }
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - mx));
      for (size_t j = 0; j <= t; ++j) {
        for (int64_t e = 0; e < d; ++e) out[t][h * d + e] += scores[j] / total * v[j][kvh * d + e];
      }
    }
  }
  return out;
}

}  // namespace

std::map<std::string, RefTensor> read_all_tensors(const std::string& dir) {
  std::map<std::string, RefTensor> out;
  std::ifstream single(dir + "/model.safetensors");
  if (single.good()) {
    read_file_tensors(dir + "/model.safetensors", out);
    return out;
  }
  simdjson::dom::parser parser;
  simdjson::padded_string index(slurp(dir + "/model.safetensors.index.json"));
  std::set<std::string> files;
  simdjson::dom::object weight_map;
  if (parser.parse(index)["weight_map"].get(weight_map)) throw std::runtime_error("reference: bad index in " + dir);
  for (auto entry : weight_map) {
    files.insert(std::string(entry.value.get_string().value()));
  }
  for (const std::string& f : files) read_file_tensors(dir + "/" + f, out);
  return out;
}

ReferenceModel::ReferenceModel(const std::string& dir) : tensors_(read_all_tensors(dir)) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(slurp(dir + "/config.json"));
  simdjson::dom::element c = parser.parse(text).value();
  arch_ = std::string(c["architectures"].at(0).get_string().value());
  const auto integer = [&](const char* k) { return c[k].get_int64().value(); };
  const auto number = [&](const char* k, double fallback) {
    double v;
    return c[k].get(v) ? fallback : v;
  };
  bool tied = false;
  if (arch_ == "GPT2LMHeadModel") {
    vocab_ = integer("vocab_size");
    hidden_ = integer("n_embd");
    layers_ = integer("n_layer");
    heads_ = kv_heads_ = integer("n_head");
    head_dim_ = hidden_ / heads_;
    eps_ = number("layer_norm_epsilon", 1e-5);
    tied = true;
    if (!c["tie_word_embeddings"].get(tied)) { /* read */ }
  } else {
    vocab_ = integer("vocab_size");
    hidden_ = integer("hidden_size");
    layers_ = integer("num_hidden_layers");
    heads_ = integer("num_attention_heads");
    kv_heads_ = integer("num_key_value_heads");
    int64_t hd;
    head_dim_ = c["head_dim"].get(hd) ? hidden_ / heads_ : hd;
    eps_ = number("rms_norm_eps", 1e-6);
    theta_ = number("rope_theta", 10000.0);
    if (c["tie_word_embeddings"].get(tied)) tied = false;
    simdjson::dom::object scaling;
    if (!c["rope_scaling"].get(scaling)) {
      for (auto f : scaling) {
        double v;
        if (!f.value.get(v)) rope_scaling_[std::string(f.key)] = v;
      }
    }
  }
  tied_ = tied || !has("lm_head.weight");
}

const RefTensor& ReferenceModel::w(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error("reference: missing tensor " + name);
  return it->second;
}

std::vector<std::vector<double>> ReferenceModel::logits(const std::vector<int32_t>& tokens) const {
  return arch_ == "GPT2LMHeadModel" ? gpt2_forward(tokens) : llama_forward(tokens);
}

std::vector<Vec> ReferenceModel::llama_forward(const std::vector<int32_t>& tokens) const {
  const size_t T = tokens.size();
  const int64_t H = hidden_, D = head_dim_, half = D / 2;
  // Inverse frequencies, with Llama 3 scaling when configured.
  Vec inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) inv[i] = std::pow(theta_, -2.0 * i / D);
  if (!rope_scaling_.empty()) {
    const double factor = rope_scaling_.at("factor"), lo = rope_scaling_.at("low_freq_factor"),
                 hi = rope_scaling_.at("high_freq_factor"),
                 old_len = rope_scaling_.at("original_max_position_embeddings");
    for (double& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > old_len / lo) {
        f /= factor;
      } else if (wavelen >= old_len / hi) {
        const double smooth = (old_len / wavelen - lo) / (hi - lo);
        f = (1 - smooth) * f / factor + smooth * f;
      }
    }
  }
  const RefTensor& embed = w("model.embed_tokens.weight");
  std::vector<Vec> x(T, Vec(static_cast<size_t>(H)));
  for (size_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < H; ++i) x[t][i] = embed.at(tokens[t], i);
  }
  for (int64_t l = 0; l < layers_; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto bias = [&](const std::string& n) { return has(p + n) ? &w(p + n) : nullptr; };
    std::vector<Vec> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const Vec h = rmsnorm(x[t], w(p + "input_layernorm.weight"), eps_);
      q[t] = matvec(w(p + "self_attn.q_proj.weight"), h, bias("self_attn.q_proj.bias"));
      k[t] = matvec(w(p + "self_attn.k_proj.weight"), h, bias("self_attn.k_proj.bias"));
      v[t] = matvec(w(p + "self_attn.v_proj.weight"), h, bias("self_attn.v_proj.bias"));
      for (auto [vec, n, norm] : {std::make_tuple(&q[t], heads_, "self_attn.q_norm.weight"),
                                  std::make_tuple(&k[t], kv_heads_, "self_attn.k_norm.weight")}) {
        for (int64_t hh = 0; hh < n; ++hh) {
          Vec head(vec->begin() + hh * D, vec->begin() + (hh + 1) * D);
          if (has(p + norm)) head = rmsnorm(head, w(p + norm), eps_);
          for (int64_t i = 0; i < half; ++i) {
            const double a = static_cast<double>(t) * inv[i], c = std::cos(a), s = std::sin(a);
            (*vec)[hh * D + i] = head[i] * c - head[i + half] * s;
            (*vec)[hh * D + i + half] = head[i + half] * c + head[i] * s;
          }
        }
      }
    }
    const std::vector<Vec> attn = attention(q, k, v, heads_, kv_heads_, D);
    for (size_t t = 0; t < T; ++t) {
      const Vec o = matvec(w(p + "self_attn.o_proj.weight"), attn[t], bias("self_attn.o_proj.bias"));
      for (int64_t i = 0; i < H; ++i) x[t][i] += o[i];
      const Vec h = rmsnorm(x[t], w(p + "post_attention_layernorm.weight"), eps_);
      Vec gate = matvec(w(p + "mlp.gate_proj.weight"), h, bias("mlp.gate_proj.bias"));
      const Vec up = matvec(w(p + "mlp.up_proj.weight"), h, bias("mlp.up_proj.bias"));
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
      const Vec down = matvec(w(p + "mlp.down_proj.weight"), gate, bias("mlp.down_proj.bias"));
      for (int64_t i = 0; i < H; ++i) x[t][i] += down[i];
    }
  }
  const RefTensor& head = tied_ ? embed : w("lm_head.weight");
  std::vector<Vec> out(T);
  for (size_t t = 0; t < T; ++t) out[t] = matvec(head, rmsnorm(x[t], w("model.norm.weight"), eps_));
  return out;
}

std::vector<Vec> ReferenceModel::gpt2_forward(const std::vector<int32_t>& tokens) const {
  const std::string root = has("transformer.wte.weight") ? "transformer." : "";
  const size_t T = tokens.size();
  const int64_t H = hidden_;
  const RefTensor &wte = w(root + "wte.weight"), &wpe = w(root + "wpe.weight");
  std::vector<Vec> x(T, Vec(static_cast<size_t>(H)));
  for (size_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < H; ++i) x[t][i] = wte.at(tokens[t], i) + wpe.at(static_cast<int64_t>(t), i);
  }
  for (int64_t l = 0; l < layers_; ++l) {
    const std::string p = root + "h." + std::to_string(l) + ".";
    std::vector<Vec> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const Vec h = layernorm(x[t], w(p + "ln_1.weight"), w(p + "ln_1.bias"), eps_);
      const Vec qkv = conv1d(w(p + "attn.c_attn.weight"), h, w(p + "attn.c_attn.bias"));
      q[t].assign(qkv.begin(), qkv.begin() + H);
      k[t].assign(qkv.begin() + H, qkv.begin() + 2 * H);
      v[t].assign(qkv.begin() + 2 * H, qkv.end());
    }
    const std::vector<Vec> attn = attention(q, k, v, heads_, kv_heads_, head_dim_);
    for (size_t t = 0; t < T; ++t) {
      const Vec o = conv1d(w(p + "attn.c_proj.weight"), attn[t], w(p + "attn.c_proj.bias"));
      for (int64_t i = 0; i < H; ++i) x[t][i] += o[i];
      const Vec h = layernorm(x[t], w(p + "ln_2.weight"), w(p + "ln_2.bias"), eps_);
      Vec fc = conv1d(w(p + "mlp.c_fc.weight"), h, w(p + "mlp.c_fc.bias"));
      for (double& a : fc) a = 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
      const Vec down = conv1d(w(p + "mlp.c_proj.weight"), fc, w(p + "mlp.c_proj.bias"));
      for (int64_t i = 0; i < H; ++i) x[t][i] += down[i];
    }
  }
  const RefTensor& head = tied_ ? wte : w("lm_head.weight");
  std::vector<Vec> out(T);
  for (size_t t = 0; t < T; ++t) {
    out[t] = matvec(head, layernorm(x[t], w(root + "ln_f.weight"), w(root + "ln_f.bias"), eps_));
  }
  return out;
}

}  // namespace reprox::testref
