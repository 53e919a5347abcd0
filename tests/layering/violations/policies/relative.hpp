#include "../proxy/api/chat_request_parser.hpp"  // relative, still upward
