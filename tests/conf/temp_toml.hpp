// A TOML file in /tmp for one test, removed when it goes out of scope.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace reprox {

struct TempToml {
  std::string path;
  explicit TempToml(const std::string& text) {
    char name[] = "/tmp/reprox-conf-test-XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp");
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempToml() { std::remove(path.c_str()); }
  TempToml(const TempToml&) = delete;
  TempToml& operator=(const TempToml&) = delete;
};

}  // namespace reprox
