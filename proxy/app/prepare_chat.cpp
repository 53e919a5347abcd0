#include "proxy/app/prepare_chat.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <functional>

#include "policies/tenant.hpp"
#include "proxy/api/cache_control.hpp"
#include "proxy/api/chat_request_parser.hpp"

namespace reprox {

namespace {

// Repeated requests (the cache-hit path) skip parsing and keying: a small
// per-thread memo maps the exact body plus every header that enters
// prepare_chat to its result, and the greedy fallback's version. The rest
// of the inputs (backend, options, rules) are fixed for the process. Bounded: one entry per slot, replaced on collision.
class PreparedMemo {
 public:
  // The body, the first Authorization, Cache-Control and x-reprox-namespace
  // (each length-prefixed; an absent namespace differs from an empty one)
  // and the fallback's version, in one buffer sized once. The headers are
  // picked out in one pass over the fields (by their parsed enum), not by
  // a lookup each.
  static std::string key_of(const Request& request, uint64_t fallback_version) {
    std::string_view parts[4] = {request.body(), {}, {}, "\x01"};
    bool seen[4] = {true, false, false, false};
    for (const auto& f : request) {
      int i = f.name() == http::field::authorization   ? 1
              : f.name() == http::field::cache_control ? 2
              : f.name() == http::field::unknown && beast::iequals(f.name_string(), "x-reprox-namespace") ? 3
                                                        : 0;
      if (i == 0 || seen[i]) continue;
      seen[i] = true;
      parts[i] = std::string_view(f.value().data(), f.value().size());
    }
    char numbers[5][24];
    size_t lengths[5], size = 0;
    for (int i = 0; i < 5; ++i) {
      const uint64_t n = i < 4 ? parts[i].size() : fallback_version;
      lengths[i] = size_t(std::to_chars(numbers[i], numbers[i] + 24, n).ptr - numbers[i]);
      size += lengths[i] + (i < 4 ? 1 + parts[i].size() : 0);
    }
    std::string k(size, '\0');
    char* p = k.data();
    for (int i = 0; i < 5; ++i) {
      std::memcpy(p, numbers[i], lengths[i]);
      p += lengths[i];
      if (i == 4) break;  // the version closes the key: a fallback engaging or clearing re-prepares
      *p++ = ':';
      if (!parts[i].empty()) std::memcpy(p, parts[i].data(), parts[i].size());  // empty: data() may be null
      p += parts[i].size();
    }
    return k;
  }
  std::shared_ptr<const PreparedChat> find(const std::string& key) const {
    const Slot& s = slots_[std::hash<std::string>()(key) % slots_.size()];
    return s.key == key ? s.value : nullptr;
  }
  void put(const std::string& key, std::shared_ptr<const PreparedChat> value) {
    Slot& s = slots_[std::hash<std::string>()(key) % slots_.size()];
    s.key = key;
    s.value = std::move(value);
  }

 private:
  struct Slot {
    std::string key;
    std::shared_ptr<const PreparedChat> value;
  };
  std::array<Slot, 128> slots_;
};

// The rule for this request; then what it may do with the cache and the
// TTL an answer would get.
void apply_rule(AppContext& app, PreparedChat& out) {
  // A view of the namespace itself: value_or("") would make a temporary that
  // dies before the views are read.
  const std::string_view ns = out.request.cache.ns ? std::string_view(*out.request.cache.ns) : std::string_view();
  const policy::RuleSubject subject{out.model_id, ns, out.tenant, kChatRoute};
  out.rule = &policy::match_rule(app.options.rules, app.options.default_rule, subject);
  out.cacheability = policy::request_cacheable(out.request, *out.rule);
  out.ttl = policy::effective_ttl(*out.rule, out.request.cache);
  if (out.ttl.ttl_s == 0 && out.cacheability.writable) {
    out.cacheability.writable = false;
    out.cacheability.reason += "; ttl 0: nothing is stored";
  }
}

// Under the greedy fallback the request is generated (and keyed) greedily.
void apply_fallback(AppContext& app, PreparedChat& out) {
  if (!app.fallback || !app.fallback->engaged(out.model_id)) return;
  out.sampling_mode = kGreedyFallbackMode;
  out.request.temperature = 0;
  if (out.request.raw.is_object()) out.request.raw.set("temperature", 0.0);  // what an upstream is sent
}

std::optional<api::ApiError> prepare_uncached(AppContext& app, const Request& request, PreparedChat& out) {
  auto parsed = api::parse_chat_request(request.body());
  if (!parsed) return parsed.error;
  out.request = std::move(*parsed.request);

  auto model = app.backend->resolve_model(out.request.model);
  if (!model && out.request.model.empty())  // an upstream has no model to assume
    return api::ApiError::invalid("model", "Missing required parameter: 'model'.");
  if (!model) return api::ApiError::model_not_found(out.request.model);
  out.model_id = *model;
  if (auto unsupported = app.backend->check_supported(out.request)) return unsupported;
  out.fingerprint = app.backend->fingerprint(out.model_id);

  // Cache directives: body object, Cache-Control and x-reprox-namespace.
  auto header_dirs = api::parse_cache_control(std::string(request[http::field::cache_control]));
  std::optional<std::string_view> ns_header;
  if (auto it = request.find("x-reprox-namespace"); it != request.end()) ns_header = it->value();
  out.request.cache = api::merge_cache_directives(out.request.cache, header_dirs, ns_header);
  out.authorization = std::string(request[http::field::authorization]);
  out.tenant = app.options.shared_cache ? "" : policy::tenant_of(out.authorization);
  apply_rule(app, out);
  apply_fallback(app, out);

  policy::KeyContext kc;
  kc.model_id = out.model_id;
  kc.fingerprint = out.fingerprint;
  kc.tenant = out.tenant;
  kc.ns = out.request.cache.ns.value_or("");
  kc.default_seed = app.options.default_seed;
  kc.effective_max_tokens = policy::effective_max_tokens(out.request, app.backend->default_max_tokens(out.model_id));
  kc.sampling_mode = out.sampling_mode;
  kc.key_other_fields = app.backend->forwards_other_fields();
  out.key = policy::make_key(out.request, kc);
  out.key_context = std::move(kc);
  return std::nullopt;
}

}  // namespace

std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request,
                                          std::shared_ptr<const PreparedChat>& out) {
  auto fresh = [&]() -> std::optional<api::ApiError> {
    auto prepared = std::make_shared<PreparedChat>();
    if (auto err = prepare_uncached(app, request, *prepared)) return err;
    out = std::move(prepared);
    return std::nullopt;
  };
  if (request.body().size() > 64 * 1024) return fresh();
  thread_local PreparedMemo memo;
  std::string key = PreparedMemo::key_of(request, app.fallback ? app.fallback->version() : 0);
  if ((out = memo.find(key))) return std::nullopt;
  auto err = fresh();
  if (!err) memo.put(key, out);
  return err;
}

std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request, PreparedChat& out) {
  std::shared_ptr<const PreparedChat> prepared;
  if (auto err = prepare_chat(app, request, prepared)) return err;
  out = *prepared;
  return std::nullopt;
}

}  // namespace reprox
