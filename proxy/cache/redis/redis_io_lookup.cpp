#include "proxy/cache/redis/redis_io_lookup.hpp"

#include <charconv>
#include <chrono>

namespace reprox {

bool parse_u64(std::string_view s, uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_entry_header(std::string_view v, EntryHeader& out) {
  auto semi = v.find(';');
  if (semi == std::string_view::npos || semi > 200) return false;
  std::string_view header = v.substr(0, semi);
  uint64_t f[7];
  for (int i = 0; i < 7; ++i) {
    auto comma = header.find(',');
    if ((comma == std::string_view::npos) != (i == 6)) return false;
    if (!parse_u64(header.substr(0, comma), f[i])) return false;
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
  }
  std::string_view rest = v.substr(semi + 1);
  if (f[3] > rest.size() || f[4] > rest.size() - f[3]) return false;
  out.epoch_all = f[0];
  out.epoch_model = f[1];
  out.epoch_ns = f[2];
  out.model = rest.substr(0, f[3]);
  out.ns = rest.substr(f[3], f[4]);
  out.blob = rest.substr(f[3] + f[4]);
  out.stored_ms = int64_t(f[5]);
  out.ttl_ms = int64_t(f[6]);
  return true;
}

std::string fresh_epoch_seq() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  return std::to_string(us.count());
}

std::vector<RedisArgv> RedisIoLookup::setup_commands(const std::string& prefix) {
  return {{"SET", prefix + "epoch:seq", fresh_epoch_seq(), "NX"}};
}

namespace {

// A reply element as a number: nil and anything unparsable give false.
bool number_of(const RedisValue& v, uint64_t& out) {
  out = 0;
  if (v.type == RedisValue::Type::integer) {
    out = uint64_t(v.integer);
    return true;
  }
  return v.type == RedisValue::Type::string && parse_u64(v.str, out);
}

// An epoch key that does not exist reads as epoch 0 (as in the scripts).
bool epoch_of(const RedisValue& v, uint64_t& out) {
  if (v.is_nil()) {
    out = 0;
    return true;
  }
  return number_of(v, out);
}

std::string names_key(std::string_view model, std::string_view ns) {
  std::string k;
  k.reserve(model.size() + 1 + ns.size());
  k.append(model);
  k.push_back('\0');
  k.append(ns);
  return k;
}

}  // namespace

RedisIoLookup::RedisIoLookup(std::shared_ptr<RedisIoChannel> channel, std::string prefix, size_t max_epochs)
    : channel_(std::move(channel)),
      prefix_(std::move(prefix)),
      seq_key_(prefix_ + "epoch:seq"),
      max_epochs_(std::max<size_t>(1, max_epochs)) {}

void RedisIoLookup::lookup(std::string_view key, Clock::time_point deadline, Done done) {
  entry_key_.assign(prefix_).append(key);
  channel_->send({"MGET", seq_key_, entry_key_}, deadline,
                 [this, deadline, done = std::move(done)](RedisIoResult& r) mutable {
                   Result out;
                   if (!r.ok) {
                     out.error = std::move(r.error);
                     return done(out);
                   }
                   const RedisValue& reply = r.reply;
                   uint64_t seq = 0;
                   if (reply.type != RedisValue::Type::array || reply.elements.size() != 2) {
                     out.error = "unexpected MGET reply";
                     return done(out);
                   }
                   if (!number_of(reply.elements[0], seq)) {
                     out.outcome = Outcome::fallback;  // epoch:seq missing: only the script can tell
                     return done(out);
                   }
                   out.seq = seq;
                   const RedisValue& entry = reply.elements[1];
                   if (entry.type != RedisValue::Type::string) {
                     out.outcome = Outcome::miss;
                     return done(out);
                   }
                   EntryHeader h;
                   if (!parse_entry_header(entry.str, h)) {
                     // Not ours to judge: the decoder reports it (as the script's path does).
                     out.outcome = Outcome::hit;
                     out.value = std::move(r.reply.elements[1].str);
                     return done(out);
                   }
                   // Taken from the header before its bytes move on.
                   std::string names = names_key(h.model, h.ns);
                   Stamp stamp = stamp_of(h);
                   auto it = epochs_.find(names);
                   if (it != epochs_.end() && it->second.seq == seq)
                     return decide(it->second, seq, std::move(r.reply.elements[1].str), stamp, done);
                   RedisArgv command{"MGET", seq_key_, prefix_ + "epoch:all",
                                     prefix_ + "epoch:model:" + std::string(h.model),
                                     prefix_ + "epoch:ns:" + std::string(h.ns)};
                   fetch_epochs(seq, std::move(r.reply.elements[1].str), std::move(names), stamp, command, deadline,
                                std::move(done));
                 });
}

RedisIoLookup::Stamp RedisIoLookup::stamp_of(const EntryHeader& h) {
  return Stamp{h.epoch_all, h.epoch_model, h.epoch_ns, h.ttl_ms > 0 ? h.stored_ms + h.ttl_ms : 0};
}

void RedisIoLookup::decide(const Epochs& e, uint64_t seq, std::string value, const Stamp& stamp, Done& done) {
  Result out;
  out.seq = seq;
  if (stamp.all != e.all || stamp.model != e.model || stamp.ns != e.ns) {
    out.outcome = Outcome::stale;
    return done(out);
  }
  out.outcome = Outcome::hit;
  out.value = std::move(value);
  out.expires_unix_ms = stamp.expires_unix_ms;
  done(out);
}

void RedisIoLookup::fetch_epochs(uint64_t seq, std::string value, std::string names, const Stamp& stamp,
                                 const RedisArgv& command, Clock::time_point deadline, Done done) {
  if (!channel_->try_ready()) {  // e.g. the pending bound: let the script decide
    Result out;
    out.outcome = Outcome::fallback;
    return done(out);
  }
  channel_->send(command, deadline,
                 [this, seq, stamp, names = std::move(names), value = std::move(value), done = std::move(done)](
                     RedisIoResult& r) mutable {
                   Result out;
                   if (!r.ok) {
                     out.error = std::move(r.error);
                     return done(out);
                   }
                   const RedisValue& reply = r.reply;
                   Epochs e;
                   bool ok = reply.type == RedisValue::Type::array && reply.elements.size() == 4 &&
                             number_of(reply.elements[0], e.seq) && epoch_of(reply.elements[1], e.all) &&
                             epoch_of(reply.elements[2], e.model) && epoch_of(reply.elements[3], e.ns);
                   if (!ok || e.seq != seq) {
                     out.outcome = Outcome::fallback;  // a purge came between the two reads
                     return done(out);
                   }
                   if (epochs_.size() >= max_epochs_) epochs_.clear();
                   epochs_[names] = e;
                   decide(e, seq, std::move(value), stamp, done);
                 });
}

}  // namespace reprox
