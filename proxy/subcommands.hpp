// Subcommands and the serve backend that come from the engine. The engine
// library defines these; a build without it gets the stubs in
// no_engine.cpp, so the proxy never includes torch headers.
#pragma once

#include <CLI/CLI.hpp>

#include "proxy/serve.hpp"

namespace reprox {

void register_engine_subcommands(CLI::App& app);
// Runs whichever engine subcommand was parsed; returns its exit code.
int run_engine_subcommand(CLI::App& app);
// Builds the embedded engine backend, or returns an empty factory.
LocalBackendFactory local_backend_factory();

}  // namespace reprox
