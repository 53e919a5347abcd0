#include "proxy/cache/entry_codec.hpp"

#include <array>
#include <cstring>
#include <vector>

namespace reprox {

namespace {

constexpr char kMagic[4] = {'R', 'P', 'X', 'G'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 1;
constexpr size_t kTrailerBytes = 4;
constexpr uint32_t kMaxChoices = 1u << 16;
constexpr size_t kMinEventBytes = 5;  // choice + four empty strings

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32), slicing by 8: eight
// bytes per step through eight tables instead of one dependent lookup per
// byte (a lookup decodes every Redis hit).
using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

const CrcTables& crc_tables() {
  static const CrcTables tables = [] {
    CrcTables t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
  }();
  return tables;
}

}  // namespace

uint32_t entry_crc32(std::string_view bytes) {
  const auto& t = crc_tables();
  uint32_t c = 0xFFFFFFFFu;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    uint32_t hi = uint32_t(p[4]) | uint32_t(p[5]) << 8 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 24;
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) c = t[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

namespace {

uint32_t crc32(std::string_view bytes) { return entry_crc32(bytes); }

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(uint8_t(v)));
}

void put_svarint(std::string& out, int64_t v) { put_varint(out, (uint64_t(v) << 1) ^ uint64_t(v >> 63)); }

void put_str(std::string& out, const std::string& s) {
  put_varint(out, s.size());
  out.append(s);
}

// Bounds-checked reader; the first failure sticks.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool varint(uint64_t& v) {
    // Most varints (string lengths, choice indexes) are one byte.
    if (pos_ < in_.size() && !(uint8_t(in_[pos_]) & 0x80)) {
      v = uint8_t(in_[pos_++]);
      return true;
    }
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return fail(CodecError::truncated);
      uint8_t b = uint8_t(in_[pos_++]);
      if (shift == 63 && b > 1) return fail(CodecError::malformed);
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return fail(CodecError::malformed);
  }
  bool svarint(int64_t& v) {
    uint64_t u;
    if (!varint(u)) return false;
    v = int64_t(u >> 1) ^ -int64_t(u & 1);
    return true;
  }
  bool u32(uint32_t& v) {
    uint64_t u;
    if (!varint(u)) return false;
    if (u > UINT32_MAX) return fail(CodecError::malformed);
    v = uint32_t(u);
    return true;
  }
  bool view(std::string_view& s) {
    uint64_t n;
    if (!varint(n)) return false;
    if (n > in_.size() - pos_) return fail(CodecError::truncated);
    s = in_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return true;
  }
  bool event(EventView& e) {
    return u32(e.choice) && view(e.content) && view(e.extra) && view(e.logprobs) && view(e.finish_reason);
  }
  std::string_view rest() const { return in_.substr(pos_); }
  size_t remaining() const { return in_.size() - pos_; }
  bool fail(CodecError e) {
    if (error_ == CodecError::none) error_ = e;
    return false;
  }
  CodecError error() const { return error_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  CodecError error_ = CodecError::none;
};

}  // namespace

const char* to_string(CodecError error) {
  switch (error) {
    case CodecError::none: return "none";
    case CodecError::truncated: return "truncated";
    case CodecError::bad_magic: return "bad magic";
    case CodecError::unknown_version: return "unknown version";
    case CodecError::bad_checksum: return "bad checksum";
    case CodecError::malformed: return "malformed";
    case CodecError::trailing_bytes: return "trailing bytes";
  }
  return "unknown";
}

std::string encode_generation(const Generation& g) {
  std::string out;
  out.reserve(64 + g.byte_size());
  out.append(kMagic, sizeof(kMagic));
  out.push_back(char(kEntryCodecVersion));
  put_str(out, g.model);
  put_str(out, g.system_fingerprint);
  put_str(out, g.ns);
  put_varint(out, g.n_choices);
  put_svarint(out, g.created_unix_ms);
  put_svarint(out, g.usage.prompt_tokens);
  put_svarint(out, g.usage.completion_tokens);
  put_svarint(out, g.usage.cached_tokens);
  put_varint(out, g.events.size());
  for (const auto& e : g.events) {
    put_varint(out, e.choice);
    put_str(out, e.delta.content);
    put_str(out, e.delta.extra);
    put_str(out, e.delta.logprobs);
    put_str(out, e.finish_reason);
  }
  uint32_t crc = crc32(out);
  for (int i = 0; i < 4; ++i) out.push_back(char(uint8_t(crc >> (8 * i))));
  return out;
}

CodecError EncodedGeneration::open(std::string_view in) {
  EncodedGeneration opened;
  CodecError e = opened.parse(in);
  *this = e == CodecError::none ? opened : EncodedGeneration{};
  return e;
}

CodecError EncodedGeneration::parse(std::string_view in) {
  if (in.size() < sizeof(kMagic)) return CodecError::truncated;
  if (std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) return CodecError::bad_magic;
  if (in.size() < kHeaderBytes) return CodecError::truncated;
  if (uint8_t(in[sizeof(kMagic)]) != kEntryCodecVersion) return CodecError::unknown_version;
  if (in.size() < kHeaderBytes + kTrailerBytes) return CodecError::truncated;

  std::string_view covered = in.substr(0, in.size() - kTrailerBytes);
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) stored |= uint32_t(uint8_t(in[covered.size() + i])) << (8 * i);
  if (stored != crc32(covered)) return CodecError::bad_checksum;

  Reader r(covered.substr(kHeaderBytes));
  bool ok = r.view(model_) && r.view(fingerprint_) && r.view(ns_) && r.u32(n_choices_) &&
            r.svarint(created_unix_ms_) && r.svarint(usage_.prompt_tokens) && r.svarint(usage_.completion_tokens) &&
            r.svarint(usage_.cached_tokens) && r.varint(n_events_);
  if (!ok) return r.error();
  if (n_choices_ > kMaxChoices) return CodecError::malformed;
  if (n_events_ > r.remaining() / kMinEventBytes) return CodecError::truncated;
  events_ = r.rest();
  // Walk every event once: after this, for_each_event() cannot fail.
  std::vector<bool> finished(n_choices_, false);
  uint32_t n_finished = 0;
  EventView e;
  for (uint64_t i = 0; i < n_events_; ++i) {
    if (!r.event(e)) return r.error();
    if (e.choice >= n_choices_) return CodecError::malformed;
    if (!e.finish_reason.empty() && !finished[e.choice]) {
      finished[e.choice] = true;
      ++n_finished;
    }
  }
  if (r.remaining() != 0) return CodecError::trailing_bytes;
  complete_ = n_choices_ > 0 && n_finished == n_choices_;
  return CodecError::none;
}

void EncodedGeneration::for_each_event(const std::function<void(const EventView&)>& fn) const {
  Reader r(events_);
  EventView e;
  for (uint64_t i = 0; i < n_events_ && r.event(e); ++i) fn(e);
}

namespace {
// Builds a field in place instead of through assign()'s general replace
// path (a decode builds hundreds of them); most fields are empty.
void set(std::string& out, std::string_view v) {
  if (v.empty())
    out.clear();
  else
    out = std::string(v);
}
}  // namespace

Generation EncodedGeneration::decode() const {
  Generation g;
  g.model = std::string(model_);
  g.system_fingerprint = std::string(fingerprint_);
  g.ns = std::string(ns_);
  g.n_choices = n_choices_;
  g.created_unix_ms = created_unix_ms_;
  g.usage = usage_;
  g.events.reserve(size_t(n_events_));
  // Fill one event and move it in: emplace_back() would value-initialize
  // (zero) every 136-byte event first, which cost more than filling it.
  GenEvent event;
  for_each_event([&](const EventView& v) {
    event.choice = v.choice;
    set(event.delta.content, v.content);
    set(event.delta.extra, v.extra);
    set(event.delta.logprobs, v.logprobs);
    set(event.finish_reason, v.finish_reason);
    g.events.push_back(std::move(event));
  });
  return g;
}

CodecError decode_generation(std::string_view in, Generation& out) {
  EncodedGeneration encoded;
  if (CodecError e = encoded.open(in); e != CodecError::none) return e;
  out = encoded.decode();
  return CodecError::none;
}

}  // namespace reprox
