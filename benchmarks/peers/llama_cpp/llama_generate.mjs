// Greedy generation on a node-llama-cpp context sequence, timed per token.
import {now} from "./reprox_client.mjs";

// Generates up to `n` greedy tokens after `ids` on `seq` (continuing its
// current state); returns the tokens and a timestamp per token.
export async function generate(seq, ids, n) {
  const tokens = [], times = [];
  const t0 = now();
  if (n > 0) {
    for await (const t of seq.evaluate(ids, {temperature: 0})) {
      tokens.push(t);
      times.push(now());
      if (tokens.length >= n) break;
    }
  }
  return {tokens, times, t0, ttft: times.length ? times[0] - t0 : null};
}

// Keeps the longest common prefix of the sequence's context and `ids`, erases
// the rest, and returns the ids still to evaluate (at least one).
export async function reusePrefix(seq, ids) {
  const ctx = seq.contextTokens;
  let p = 0;
  while (p < ctx.length && p < ids.length && ctx[p] === ids[p]) p++;
  if (p === ids.length) p--; // the last prompt token must be evaluated to get logits
  if (p < ctx.length) await seq.eraseContextTokenRanges([{start: p, end: ctx.length}]);
  return {rest: ids.slice(p), reused: p};
}
