#include "engine/model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <simdjson.h>

namespace reprox::engine {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::Other: return "other";
  }
  return "?";
}

size_t dtype_size(DType dtype) { return dtype == DType::F32 ? 4 : dtype == DType::Other ? 0 : 2; }

size_t dtype_name_size(const std::string& name) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4}, {"U32", 4}, {"F16", 2}, {"BF16", 2},
      {"I16", 2}, {"U16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  const auto it = sizes.find(name);
  return it == sizes.end() ? 0 : it->second;
}

DType parse_dtype_name(const std::string& name) {
  if (name == "F32") return DType::F32;
  if (name == "F16") return DType::F16;
  if (name == "BF16") return DType::BF16;
  throw std::runtime_error("unsupported safetensors dtype '" + name + "' (supported: F32, F16, BF16)");
}

namespace {

DType parse_dtype_or_other(const std::string& name) {
  if (name == "F32") return DType::F32;
  if (name == "F16") return DType::F16;
  if (name == "BF16") return DType::BF16;
  return DType::Other;
}

}  // namespace

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t f32_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (abs < 0x38800000u) {                         // subnormal or zero in f16
    if (abs < 0x33000000u) return sign;            // below half the smallest subnormal
    const uint32_t exp = abs >> 23;  // 102..112 here
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t drop = 126 - exp;  // value / 2^-24 == mant >> drop
    const uint32_t half = 1u << (drop - 1);
    const uint32_t rem = mant & ((1u << drop) - 1u);
    uint32_t out = mant >> drop;
    if (rem > half || (rem == half && (out & 1u))) ++out;
    return static_cast<uint16_t>(sign | out);
  }
  const uint32_t exp = (abs >> 23) - 127 + 15;
  const uint32_t mant = abs & 0x7fffffu;
  uint32_t out = (exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) ++out;  // may carry into exponent: correct
  return static_cast<uint16_t>(sign | out);
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot stat " + path + ": " + std::strerror(err));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error("cannot mmap " + path + ": " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(mapped);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  SafetensorsIndex index = parse_safetensors(file_.data(), file_.size(), path);
  header_len_ = index.header_len;
  tensors_ = std::move(index.tensors);
}

SafetensorsIndex parse_safetensors(const uint8_t* data, size_t size, const std::string& origin) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("malformed safetensors file " + origin + ": " + why);
  };
  if (size < 8) throw fail("shorter than the 8-byte header length");
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | data[i];
  if (len > size - 8) throw fail("header length exceeds the file size");
  SafetensorsIndex index;
  index.header_len = static_cast<size_t>(len);
  const size_t data_begin = 8 + index.header_len;
  const size_t data_size = size - data_begin;

  simdjson::dom::parser parser;
  simdjson::padded_string json(reinterpret_cast<const char*>(data) + 8, index.header_len);
  simdjson::dom::object root;
  if (parser.parse(json).get(root) != simdjson::SUCCESS) throw fail("header is not a JSON object");
  for (auto field : root) {
    const std::string name(field.key);
    if (name == "__metadata__") continue;
    simdjson::dom::object entry;
    std::string_view dtype;
    simdjson::dom::array shape, offsets;
    if (field.value.get(entry) || entry["dtype"].get(dtype) || entry["shape"].get(shape) ||
        entry["data_offsets"].get(offsets)) {
      throw fail("bad entry for tensor '" + name + "'");
    }
    TensorView view;
    view.name = name;
    view.dtype_text = std::string(dtype);
    const size_t element_size = dtype_name_size(view.dtype_text);
    if (element_size == 0) throw fail("unknown dtype '" + view.dtype_text + "' for tensor '" + name + "'");
    view.dtype = element_size == 2 || element_size == 4 ? parse_dtype_or_other(view.dtype_text) : DType::Other;
    for (auto dim : shape) {
      int64_t d = 0;
      if (dim.get(d) || d < 0) throw fail("bad shape for tensor '" + name + "'");
      view.shape.push_back(d);
    }
    std::vector<uint64_t> range;
    for (auto off : offsets) {
      uint64_t v = 0;
      if (off.get(v)) throw fail("bad data_offsets for tensor '" + name + "'");
      range.push_back(v);
    }
    if (range.size() != 2 || range[0] > range[1] || range[1] > data_size) {
      throw fail("data_offsets out of range for tensor '" + name + "'");
    }
    view.nbytes = static_cast<size_t>(range[1] - range[0]);
    int64_t numel = 1;
    for (int64_t d : view.shape) {
      if (__builtin_mul_overflow(numel, d, &numel)) throw fail("shape too large for tensor '" + name + "'");
    }
    size_t expected_bytes = 0;
    if (__builtin_mul_overflow(static_cast<size_t>(numel), element_size, &expected_bytes) ||
        view.nbytes != expected_bytes) {
      throw fail("byte size does not match shape and dtype for tensor '" + name + "'");
    }
    view.data = data + data_begin + range[0];
    index.tensors.emplace(name, std::move(view));
  }
  return index;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::string_view SafetensorsFile::header_bytes() const {
  return {reinterpret_cast<const char*>(file_.data()), 8 + header_len_};
}

std::string_view SafetensorsFile::data_bytes() const {
  return {reinterpret_cast<const char*>(file_.data()) + 8 + header_len_, file_.size() - 8 - header_len_};
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors) {
  std::ostringstream header;
  header << '{';
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorToWrite& t = tensors[i];
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    const std::string dtype = t.dtype == DType::Other ? t.other_dtype : dtype_name(t.dtype);
    if (t.bytes.size() != static_cast<size_t>(numel) * dtype_name_size(dtype) || dtype_name_size(dtype) == 0) {
      throw std::runtime_error("write_safetensors: byte size mismatch for " + t.name);
    }
    if (i > 0) header << ',';
    header << '"' << t.name << "\":{\"dtype\":\"" << dtype << "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) header << (d ? "," : "") << t.shape[d];
    header << "],\"data_offsets\":[" << offset << ',' << offset + t.bytes.size() << "]}";
    offset += t.bytes.size();
  }
  header << ",\"__metadata__\":{\"format\":\"pt\"}}";
  std::string text = header.str();
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  uint8_t len_bytes[8];
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<uint8_t>(len >> (8 * i));
  out.write(reinterpret_cast<const char*>(len_bytes), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const TensorToWrite& t : tensors) {
    out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
  }
  if (!out) throw std::runtime_error("error writing " + path);
}

std::vector<uint8_t> encode_floats(const std::vector<float>& values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h = dtype == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
      bytes[2 * i] = static_cast<uint8_t>(h & 0xff);
      bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
  }
  return bytes;
}

}  // namespace reprox::engine
