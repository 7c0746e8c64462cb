// Drives `aiperf-node mock-server` with the official `openai` npm client.
// Usage: node compat.mjs http://127.0.0.1:PORT   (exits non-zero on any mismatch)
import OpenAI from "openai";

const base = process.argv[2];
if (!base) {
  console.error("usage: node compat.mjs http://127.0.0.1:PORT");
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
let failures = 0;
function check(cond, what) {
  if (!cond) {
    failures++;
    console.error(`FAIL: ${what}`);
  } else {
    console.log(`ok: ${what}`);
  }
}

// The built-in tokenizer (runtime/tokenizer/tokenizer.hpp), for ASCII text:
// optional whitespace + 1..8 non-whitespace bytes; trailing whitespace = 1.
function countTokens(text) {
  const ws = new Set([" ", "\t", "\n", "\r", "\f", "\v"]);
  let tokens = 0;
  let i = 0;
  while (i < text.length) {
    while (i < text.length && ws.has(text[i])) i++;
    if (i === text.length) { tokens++; break; }
    let piece = 0;
    while (i < text.length && !ws.has(text[i]) && piece < 8) { i++; piece++; }
    tokens++;
  }
  return tokens;
}

const messages = [{ role: "user", content: "hello from the official client" }];

// 1. streaming chat with usage
{
  const stream = await client.chat.completions.create({
    model: "mock-model", messages, max_completion_tokens: 24, stream: true,
    stream_options: { include_usage: true },
  });
  let content = "";
  let usage = null;
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      content += c.delta?.content ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  check(chunks === 25, `stream: 24 token chunks + usage chunk (got ${chunks})`);
  check(countTokens(content) === 24, `stream: content has 24 tokens (got ${countTokens(content)})`);
  check(usage?.completion_tokens === 24, "stream: usage.completion_tokens == 24");
  check(usage?.prompt_tokens === countTokens(messages[0].content), "stream: usage.prompt_tokens");
  check(finish === "length", "stream: finish_reason length");
}

// 2. non-streaming chat
{
  const r = await client.chat.completions.create({ model: "mock-model", messages, max_tokens: 10 });
  check(r.object === "chat.completion", "chat: object");
  check(r.choices[0].message.role === "assistant", "chat: role");
  check(countTokens(r.choices[0].message.content) === 10, "chat: 10 tokens");
  check(r.usage.completion_tokens === 10 && r.usage.total_tokens === r.usage.prompt_tokens + 10, "chat: usage");
}

// 3. completions, streaming and not
{
  const r = await client.completions.create({ model: "mock-model", prompt: "once upon a time", max_tokens: 6 });
  check(r.object === "text_completion", "completions: object");
  check(countTokens(r.choices[0].text) === 6, "completions: 6 tokens");
  check(r.usage.prompt_tokens === 4, "completions: prompt tokens");
  const s = await client.completions.create({ model: "mock-model", prompt: "once", max_tokens: 5, stream: true });
  let text = "";
  for await (const chunk of s) text += chunk.choices[0]?.text ?? "";
  check(countTokens(text) === 5, "completions stream: 5 tokens");
}

// 4. embeddings (the SDK asks for base64 by default and decodes it)
{
  const r = await client.embeddings.create({ model: "mock-model", input: ["alpha beta", "gamma"] });
  check(r.data.length === 2, "embeddings: two vectors");
  check(r.data[0].embedding.length === 768, `embeddings: 768 dims (got ${r.data[0].embedding.length})`);
  const norm = Math.sqrt(r.data[0].embedding.reduce((a, x) => a + x * x, 0));
  check(Math.abs(norm - 1) < 1e-4, `embeddings: unit vector (norm ${norm})`);
  check(r.usage.prompt_tokens === 3, "embeddings: usage.prompt_tokens");
  const f = await client.embeddings.create({ model: "mock-model", input: "alpha beta", encoding_format: "float" });
  check(Math.abs(f.data[0].embedding[0] - r.data[0].embedding[0]) < 1e-6, "embeddings: float == base64");
}

// 5. a malformed body -> 400 with an error object (raw fetch: the SDK only sends valid JSON)
{
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: "{not json",
  });
  const body = await res.json();
  check(res.status === 400, `malformed: status 400 (got ${res.status})`);
  check(typeof body?.error?.message === "string", "malformed: error object");
}

// 6. an invalid request through the SDK surfaces as BadRequestError
{
  try {
    await client.chat.completions.create({ model: "mock-model" });
    check(false, "sdk: missing messages raises");
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError, `sdk: BadRequestError (got ${e?.constructor?.name})`);
    check(e.status === 400 && typeof e.error?.message === "string", "sdk: status 400 + error object");
  }
}

// 7. models
{
  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  check(models.length >= 1, "models: listed");
}

if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("all openai npm checks passed");
