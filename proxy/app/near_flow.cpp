#include "proxy/app/near_flow.hpp"

#include <boost/asio/dispatch.hpp>

#include "policies/audit.hpp"
#include "policies/near_key.hpp"

namespace reprox {
bool near_applies(const AppContext& app, const PreparedChat& p) {
  return app.near_index && p.rule && p.rule->near != policy::NearMode::off && p.request.cache.near;
}

namespace {

// Posts `task` to the request's strand.
template <typename Task>
void on_strand(const std::shared_ptr<ChatContext>& c, Task task) {
  net::dispatch(c->responder->executor(), std::move(task));
}

// serve: answers from the match's entry when the store still has it.
void serve_near(const std::shared_ptr<ChatContext>& c, const NearCandidate& match) {
  auto post = [ex = c->responder->executor()](std::function<void()> task) { net::dispatch(ex, std::move(task)); };
  c->app.store->get_on(match.key, std::move(post), [c, match](Lookup lookup) {
    if (lookup.status != LookupStatus::hit) return generate_and_answer(c, true);
    const int64_t now = now_unix_ms();
    const int64_t age = std::max<int64_t>(0, (now - lookup.entry.stored_unix_ms) / 1000);
    const int64_t left = lookup.entry.expires_unix_ms == 0 ? 0 : std::max<int64_t>(0, (lookup.entry.expires_unix_ms - now) / 1000);
    c->near_hit = match;
    c->app.metrics->near_hit(match.similarity);
    c->app.metrics->lookup("near-hit");
    answer_from_generation(*c, lookup.entry.generation, "near-hit", age, left, lookup.entry.tier);
  });
}

// shadow: keeps the match's answer for the comparison, then generates.
void shadow_near(const std::shared_ptr<ChatContext>& c, const NearCandidate& match) {
  auto post = [ex = c->responder->executor()](std::function<void()> task) { net::dispatch(ex, std::move(task)); };
  c->app.store->get_on(match.key, std::move(post), [c, match](Lookup lookup) {
    if (lookup.status == LookupStatus::hit) {
      c->near_shadow = lookup.entry.generation.shared();
      c->near_shadow_match = match;
    } else {
      c->app.metrics->near_shadow("none", -1);
    }
    generate_and_answer(c, true);
  });
}

void on_report(const std::shared_ptr<ChatContext>& c, const NearReport& report) {
  const policy::NearMode mode = c->prepared->rule->near;
  if (report.match) {
    if (mode == policy::NearMode::serve) return serve_near(c, *report.match);
    return shadow_near(c, *report.match);
  }
  if (mode == policy::NearMode::shadow)
    c->app.metrics->near_shadow(report.vetoed_above_threshold ? "vetoed" : "none", -1);
  generate_and_answer(c, true);
}

}  // namespace

void after_exact_miss(const std::shared_ptr<ChatContext>& c) {
  const PreparedChat& p = *c->prepared;
  if (!near_applies(c->app, p)) return generate_and_answer(c, true);
  std::optional<policy::NearQuery> query = policy::near_query(p.request, p.key_context);
  if (!query) return generate_and_answer(c, true);
  const NearProbe probe = near_probe(std::move(*query));
  find_near(*c->app.near_index, probe, p.rule->near_threshold, c->key.key, [c](NearReport report) {
    on_strand(c, [c, report = std::move(report)] { on_report(c, report); });
  });
}

void near_after_generation(AppContext& app, const PreparedChat& p, const Generation& generation, bool stored,
                           std::chrono::seconds ttl, const std::shared_ptr<const Generation>& shadow) {
  if (shadow) {
    const bool same = policy::same_answer(*shadow, generation);
    app.metrics->near_shadow(same ? "same" : "different", policy::answer_similarity(*shadow, generation));
  }
  if (!stored || !app.near_index || !p.rule || p.rule->near == policy::NearMode::off) return;
  std::optional<policy::NearQuery> query = policy::near_query(p.request, p.key_context);
  if (!query) return;
  NearProbe probe = near_probe(std::move(*query));
  auto features = std::make_shared<const policy::near::Features>(policy::near::features_of(probe.normalized));
  app.near_index->add(probe.query.context_key, probe.bands, NearEntry{p.key.key, probe.query.text, std::move(features)},
                      ttl);
}

}  // namespace reprox
