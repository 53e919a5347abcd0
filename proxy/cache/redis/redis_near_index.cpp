#include "proxy/cache/redis/redis_near_index.hpp"

namespace reprox {
namespace {

// KEYS: the bucket sets; ARGV[1]: the text prefix, ARGV[2]: the most
// candidates to return. Replies a flat array
// key, text, key, text... of the members whose text is still there; drops
// the others from the buckets.
constexpr const char* kCandidatesScript = R"lua(
local keys = redis.call('SUNION', unpack(KEYS))
local out = {}
local limit = tonumber(ARGV[2])
for _, k in ipairs(keys) do
  if #out >= 2 * limit then break end
  local t = redis.call('GET', ARGV[1] .. k)
  if t then
    out[#out + 1] = k
    out[#out + 1] = t
  else
    for _, b in ipairs(KEYS) do redis.call('SREM', b, k) end
  end
end
return out
)lua";

}  // namespace

std::string RedisNearIndex::bucket_key(const std::string& context, uint32_t band) const {
  return store_.redis_key("near:" + context + ":" + std::to_string(band));
}

void RedisNearIndex::add(const std::string& context, const NearBands& bands, const NearEntry& entry,
                         std::chrono::seconds ttl) {
  auto job = std::make_shared<RedisJob>();
  job->op = "near";
  const std::string ms = std::to_string(int64_t(ttl.count()) * 1000);
  job->commands.push_back({"SET", store_.redis_key("neartext:" + entry.key), entry.text, "PX", ms});
  for (uint32_t band : bands) {
    const std::string bucket = bucket_key(context, band);
    job->commands.push_back({"SADD", bucket, entry.key});
    job->commands.push_back({"PEXPIRE", bucket, ms, "GT"});
    job->commands.push_back({"PEXPIRE", bucket, ms, "NX"});
  }
  store_.executor().submit(store_.shard_of(context), job);
}

void RedisNearIndex::candidates(const std::string& context, const NearBands& bands,
                                std::function<void(std::vector<NearEntry>)> done) {
  auto job = std::make_shared<RedisJob>();
  job->op = "near";
  RedisArgv eval{"EVAL", kCandidatesScript, std::to_string(bands.size())};
  for (uint32_t band : bands) eval.push_back(bucket_key(context, band));
  eval.push_back(store_.redis_key("neartext:"));
  eval.push_back(std::to_string(kMaxNearCandidates));
  job->commands.push_back(std::move(eval));
  job->done = [done = std::move(done)](RedisJobResult& r) {
    std::vector<NearEntry> out;
    if (r.ok && !r.replies.empty() && r.replies[0].type == RedisValue::Type::array) {
      auto& e = r.replies[0].elements;
      for (size_t i = 0; i + 1 < e.size(); i += 2) out.push_back(NearEntry{std::move(e[i].str), std::move(e[i + 1].str), nullptr});
    }
    done(std::move(out));
  };
  store_.executor().submit(store_.shard_of(context), job,
                           TimerQueue::Clock::now() + store_.get_deadline());
}

}  // namespace reprox
