#include "proxy/server/responder.hpp"

#include <string_view>

namespace reprox {

Response to_response(RenderedAnswer&& answer) {
  Response res{http::int_to_status(answer.status), 11};
  std::string_view rest = answer.fields;
  while (!rest.empty()) {
    auto end = rest.find("\r\n");
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    res.insert(line.substr(0, colon), value);
  }
  res.body() = std::move(answer.body);
  return res;
}

}  // namespace reprox
