#include "proxy/app/request_log.hpp"

#include "policies/canonical_key.hpp"
#include "proxy/app/audit_record.hpp"
#include "proxy/app/chat_handler.hpp"
#include "proxy/app/status_board.hpp"

namespace reprox {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point started) {
  return std::chrono::duration<double, std::milli>(Clock::now() - started).count();
}

void emit(AuditLog& log, const AuditRecord& record) {
  if (log.file_enabled()) log.write(audit_json_line(record));
  if (log.access_enabled()) log.access(access_line(record, "-", "POST", kChatRoute));
}

}  // namespace

void log_chat(const ChatContext& c, const ChatOutcome& o) {
  AuditLog* log = c.app.audit_log;
  if (!log && !c.app.status) return;
  const PreparedChat& p = *c.prepared;
  const double latency_ms = elapsed_ms(c.started);
  const char* cache = o.status == 200 ? o.cache : "error";
  if (c.app.status) c.app.status->record(c.started, latency_ms, p.tenant, p.key.key, o.status, cache, o.tier);
  if (!log) return;
  AuditRecord r;
  r.latency_ms = latency_ms;
  r.time_ms = now_unix_ms() - int64_t(latency_ms);
  r.cache = cache;
  r.key = p.key.key;
  r.tenant = p.tenant;
  r.model = p.model_id;
  r.seed = p.key.seed;
  r.seed_injected = p.key.seed_injected;
  r.params = audit_params(p.request, policy::effective_max_tokens(p.request, c.app.backend->default_max_tokens(p.model_id)));
  r.mode = p.sampling_mode.empty() ? "sampled" : p.sampling_mode;
  r.fingerprint = p.fingerprint;
  r.tier = std::string(o.tier);
  r.rule = p.rule ? p.rule->name : "default";
  r.ttl_s = o.ttl_s;
  if (o.usage) {
    r.prompt_tokens = o.usage->prompt_tokens;
    r.completion_tokens = o.usage->completion_tokens;
    r.cached_tokens = o.usage->cached_tokens;
  }
  r.status = o.status;
  r.error = o.error;
  if (c.app.options.audit_prompts)
    if (const json::Value* messages = p.request.raw.find("messages")) r.messages = *messages;
  emit(*log, r);
}

void log_rejected_chat(AppContext& app, const api::ApiError& error, Clock::time_point started) {
  if (!app.audit_log && !app.status) return;
  const double latency_ms = elapsed_ms(started);
  if (app.status) app.status->record(started, latency_ms, "", "", error.status, "error", "");
  if (!app.audit_log) return;
  AuditRecord r;
  r.latency_ms = latency_ms;
  r.time_ms = now_unix_ms() - int64_t(latency_ms);
  r.mode = "sampled";
  r.cache = "error";
  r.rule = "";
  r.ttl_s = -1;
  r.status = error.status;
  r.error = error.code.empty() ? error.type : error.code;
  emit(*app.audit_log, r);
}

}  // namespace reprox
