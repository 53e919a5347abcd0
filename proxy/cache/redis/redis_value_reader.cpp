#include "proxy/cache/redis/redis_value_reader.hpp"

#include <hiredis/hiredis.h>

#include <new>

namespace reprox {

namespace {

// hiredis calls these per element, parents before children. A top-level
// reply is a new RedisValue (the reader hands it back through
// redisReaderGetReply); an element lives in its parent's `elements`, which
// createArray sized up front, so pointers to elements stay valid. hiredis
// only needs a non-null return (null means out of memory) and, for arrays,
// the object to hand to the children as their parent.
RedisValue* slot_for(const redisReadTask* task) {
  if (!task->parent) return new (std::nothrow) RedisValue();
  auto* parent = static_cast<RedisValue*>(task->parent->obj);
  return &parent->elements[size_t(task->idx)];
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
  RedisValue* v = slot_for(task);
  if (!v) return nullptr;
  switch (task->type) {
    case REDIS_REPLY_ERROR: v->type = RedisValue::Type::error; break;
    case REDIS_REPLY_STATUS: v->type = RedisValue::Type::status; break;
    default: v->type = RedisValue::Type::string; break;
  }
  v->str.assign(str, len);
  return v;
}

void* create_array(const redisReadTask* task, int elements) {
  RedisValue* v = slot_for(task);
  if (!v) return nullptr;
  v->type = RedisValue::Type::array;
  v->elements.resize(size_t(elements > 0 ? elements : 0));
  return v;
}

void* create_integer(const redisReadTask* task, long long value) {
  RedisValue* v = slot_for(task);
  if (!v) return nullptr;
  v->type = RedisValue::Type::integer;
  v->integer = value;
  return v;
}

void* create_nil(const redisReadTask* task) {
  RedisValue* v = slot_for(task);
  if (!v) return nullptr;
  v->type = RedisValue::Type::nil;
  return v;
}

// hiredis frees only top-level objects (a finished reply it still holds, or
// a partial one after an error); elements go with their parent.
void free_object(void* obj) { delete static_cast<RedisValue*>(obj); }

redisReplyObjectFunctions value_functions = {create_string, create_array, create_integer, create_nil, free_object};

}  // namespace

RedisValueReader::RedisValueReader() : reader_(redisReaderCreateWithFunctions(&value_functions)) {
  if (!reader_) throw std::bad_alloc();
}

RedisValueReader::~RedisValueReader() { redisReaderFree(reader_); }

bool RedisValueReader::feed(const char* data, size_t n) { return redisReaderFeed(reader_, data, n) == REDIS_OK; }

RedisValueReader::Next RedisValueReader::next(RedisValue& out) {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_, &raw) != REDIS_OK) return Next::error;
  if (!raw) return Next::incomplete;
  std::unique_ptr<RedisValue> value(static_cast<RedisValue*>(raw));
  out = std::move(*value);
  return Next::value;
}

std::string RedisValueReader::error() const { return reader_->errstr; }

}  // namespace reprox
