// A client of a running `reprox serve`, as the benchmarks drive it: OpenAI
// chat requests over HTTP on loopback, SSE streaming, greedy, never answered
// by the response cache (`Cache-Control: no-store`), with `logprobs` so that
// each streamed token is counted and compared by its bytes.
import fs from "node:fs";

export const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
// The middle value (the mean of the two middle ones for an even count).
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), h = Math.floor(s.length / 2);
  return s.length ? (s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2) : null;
};
const TIMEOUT_MS = 30 * 60 * 1000;

// The resident and peak memory of process `pid`, in MiB (nulls when gone).
export function rss(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number((s.match(new RegExp(`${k}:\\s+(\\d+)`)) || [])[1] || 0);
    return {rss_mib: kb("VmRSS") / 1024, hwm_mib: kb("VmHWM") / 1024};
  } catch {
    return {rss_mib: null, hwm_mib: null};
  }
}

// CPU seconds process `pid` has used (user + system), or null when gone.
export function cpuSeconds(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" "); // fields from the 3rd on
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

export async function postJSON(url, path, body) {
  const r = await fetch(url + path, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS)});
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

// One streaming chat request to `url`; returns each token's bytes (hex) with
// its arrival time, the time to the first token, the usage, the finish reason
// and the first token's top log-probabilities (when asked for).
export async function chat(url, messages, maxTokens, {tenant = "bench", topLogprobs = 0} = {}) {
  const body = {messages, temperature: 0, max_tokens: maxTokens, stream: true,
    stream_options: {include_usage: true}, logprobs: true};
  if (topLogprobs) body.top_logprobs = topLogprobs;
  const t0 = now();
  const r = await fetch(url + "/v1/chat/completions", {method: "POST",
    headers: {"content-type": "application/json", "cache-control": "no-store", authorization: `Bearer ${tenant}`},
    body: JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS)});
  if (!r.ok) throw new Error(`chat: HTTP ${r.status} ${await r.text()}`);
  const tokens = [], times = [];
  let usage = null, finish = null, top = null, buf = "";
  const dec = new TextDecoder();
  for await (const chunk of r.body) {
    buf += dec.decode(chunk, {stream: true});
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of ev.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") continue;
        const j = JSON.parse(data);
        if (j.error) throw new Error(`chat: ${JSON.stringify(j.error)}`);
        if (j.usage) usage = j.usage;
        for (const c of j.choices || []) {
          if (c.finish_reason) finish = c.finish_reason;
          for (const lp of c.logprobs?.content || []) {
            const t = now();
            tokens.push(Buffer.from(lp.bytes).toString("hex"));
            times.push(t);
            if (top === null && lp.top_logprobs?.length) {
              top = lp.top_logprobs.map((x) => [Buffer.from(x.bytes).toString("hex"), x.logprob]);
            }
          }
        }
      }
    }
  }
  return {tokens, times, t0, ttft: times.length ? times[0] - t0 : null, usage, finish, top};
}

// Decode rate of a run: tokens after the first over the time from the first
// to the last (so neither the prompt nor the first token counts).
export const decodeRate = (r) => (r.times.length - 1) / ((r.times.at(-1) - r.times[0]) / 1000);
