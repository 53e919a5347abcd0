#include "proxy/backend/backend.hpp"  // an engine file reaching up into the proxy
