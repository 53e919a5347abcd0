// Stubs for a build without the embedded engine (REPROX_WITH_TORCH=OFF):
// `serve` then needs --upstream.
#include "proxy/subcommands.hpp"

namespace reprox {

void register_engine_subcommands(CLI::App&) {}
int run_engine_subcommand(CLI::App&) { return 2; }
LocalBackendFactory local_backend_factory() { return {}; }

}  // namespace reprox
