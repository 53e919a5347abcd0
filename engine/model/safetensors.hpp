#pragma once
// Safetensors files: a memory-mapped reader and a small writer.
// Format: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//  "__metadata__": {...}}, then the raw tensor bytes (offsets relative to the
// end of the header). Torch-free; exceptions are thrown at load time only.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reprox::engine {

// Other: a dtype the engine cannot compute with (I64, F64, I8, ...); such
// tensors are listed (TensorView::dtype_text says which) so that a checkpoint
// carrying unused ones still loads, and the loader names any it needs.
enum class DType { F32, F16, BF16, Other };

const char* dtype_name(DType dtype);           // "F32", "F16", "BF16", "other"
size_t dtype_size(DType dtype);                // bytes per element (0 for Other)
DType parse_dtype_name(const std::string& name);  // throws std::runtime_error
// Bytes per element of any safetensors dtype name; 0 for a name it does not know.
size_t dtype_name_size(const std::string& name);

// Scalar conversions (round to nearest even when narrowing).
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
uint16_t f32_to_bf16(float value);

// A read-only memory mapping of a whole file; unmapped on destruction.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws with the path on failure
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::string dtype_text = "F32";  // as written in the header
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // points into the mapping; may be unaligned
  size_t nbytes = 0;

  int64_t numel() const;
};

// The tensor table of a safetensors image held in memory (`data`, `size`:
// the whole file). Views point into `data`. Throws std::runtime_error
// "malformed safetensors file ORIGIN: ..." on any malformed header: a bad
// length, invalid JSON, a bad entry, offsets outside the data, or a byte
// size that does not match shape and dtype (overflow included).
struct SafetensorsIndex {
  size_t header_len = 0;  // the JSON header's bytes (after the 8-byte length)
  std::map<std::string, TensorView> tensors;
};
SafetensorsIndex parse_safetensors(const uint8_t* data, size_t size, const std::string& origin);

// One .safetensors file, memory-mapped. Views stay valid while it lives.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // throws on a malformed file

  const std::string& path() const { return file_.path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  // The 8-byte length prefix plus the JSON header, as stored.
  std::string_view header_bytes() const;
  // Everything after the header (the tensor bytes).
  std::string_view data_bytes() const;

 private:
  MappedFile file_;
  size_t header_len_ = 0;
  std::map<std::string, TensorView> tensors_;
};

// A tensor to write: `bytes` already holds numel * dtype_size little-endian values.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::string other_dtype = {};  // the dtype name written when dtype is Other (e.g. "I64")
};

// Writes tensors in the given order; the header is padded with spaces to a
// multiple of 8 bytes so the data section is 8-byte aligned. Throws on I/O errors.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors);

// Encodes float values as `dtype` bytes.
std::vector<uint8_t> encode_floats(const std::vector<float>& values, DType dtype);

}  // namespace reprox::engine
