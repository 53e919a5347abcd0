#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace reprox {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// A connection's strand: the executor of the io_context the connection
// lives on. Every such context is run by exactly one thread (IoPool), which
// makes its executor an implicit strand: the connection's handlers never
// run concurrently, and a completion on that thread (a Redis reply, say)
// dispatches to the connection inline. An explicit strand on top cost a
// strand queue and its mutex per dispatch, and any_io_executor's type
// erasure put a copy of it on the heap per operation and per work guard:
// about 20% of a Redis cache hit's instructions (redis_hit_instructions.sh).
using ConnectionStrand = net::io_context::executor_type;
using ConnectionSocket = tcp::socket::rebind_executor<ConnectionStrand>::other;
using ConnectionStream = beast::basic_stream<tcp, ConnectionStrand>;
}  // namespace reprox
