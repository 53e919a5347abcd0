// `reprox key`: the offline twin of POST /reprox/v1/explain.
#pragma once

#include <iosfwd>

#include "policies/canonical_key.hpp"

namespace reprox {

// Reads one chat request JSON from `in` and writes one line to `out`:
// explain_json() of it (exit 0), or the OpenAI error JSON (exit 2).
// From `defaults`: model_id is used when the body names no model (a named
// model is keyed as written, since nothing resolves it offline); ns when the
// body's cache.namespace is absent; effective_max_tokens when the body sets
// no limit; fingerprint, tenant and default_seed as given.
int run_key_cli(std::istream& in, std::ostream& out, const policy::KeyContext& defaults);

}  // namespace reprox
