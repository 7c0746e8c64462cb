#include "tools/mock_server/responses.hpp"

#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace aiperf::mock_server {

namespace {

using rapidjson::Value;

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  out.append(buf, end);
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

api_error invalid(std::string message, std::string_view param = {},
                  std::string_view code = {}) {
  return {400, error_body(message, "invalid_request_error", param, code)};
}

bool is_json_content_type(std::string_view ct) {
  constexpr std::string_view json = "application/json";
  if (ct.size() < json.size())
    return false;
  for (std::size_t i = 0; i < json.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(ct[i])) != json[i])
      return false;
  return ct.size() == json.size() || ct[json.size()] == ';'
         || ct[json.size()] == ' ';
}

// Reads an optional non-negative integer field; null counts as absent.
std::optional<api_error> read_count(const Value& obj, const char* name,
                                    std::uint64_t min,
                                    std::optional<std::uint64_t>& out) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || it->value.IsNull())
    return std::nullopt;
  if (!it->value.IsUint64())
    return invalid(std::string{"'"} + name
                       + "' must be an integer >= " + std::to_string(min),
                   name, "invalid_type");
  auto v = it->value.GetUint64();
  if (v < min || v > max_output_tokens)
    return invalid(std::string{"'"} + name + "' must be between "
                       + std::to_string(min) + " and "
                       + std::to_string(max_output_tokens) + ", got "
                       + std::to_string(v),
                   name, "integer_out_of_range");
  out = v;
  return std::nullopt;
}

std::optional<api_error> read_bool(const Value& obj, const char* name,
                                   bool& out) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || it->value.IsNull())
    return std::nullopt;
  if (!it->value.IsBool())
    return invalid(std::string{"'"} + name + "' must be a boolean", name,
                   "invalid_type");
  out = it->value.GetBool();
  return std::nullopt;
}

void join(std::string& text, std::string_view piece, bool& first) {
  if (!first)
    text.push_back(' ');
  text.append(piece);
  first = false;
}

// Chat message content: a string, null, or an array of content parts.
std::optional<api_error> collect_chat_text(const Value& messages,
                                           std::string& text) {
  bool first = true;
  for (const auto& m : messages.GetArray()) {
    if (!m.IsObject())
      return invalid("each entry of 'messages' must be an object", "messages",
                     "invalid_type");
    auto c = m.FindMember("content");
    if (c == m.MemberEnd() || c->value.IsNull())
      continue;
    if (c->value.IsString()) {
      join(text, {c->value.GetString(), c->value.GetStringLength()}, first);
    } else if (c->value.IsArray()) {
      for (const auto& part : c->value.GetArray()) {
        if (!part.IsObject())
          return invalid("message content parts must be objects",
                         "messages.content", "invalid_type");
        auto t = part.FindMember("text");
        if (t != part.MemberEnd() && t->value.IsString())
          join(text, {t->value.GetString(), t->value.GetStringLength()}, first);
      }
    } else {
      return invalid("message 'content' must be a string, an array of "
                     "content parts, or null",
                     "messages.content", "invalid_type");
    }
  }
  return std::nullopt;
}

// One prompt/input: a string or a token-id array. Appends its text (token ids
// as decimal numbers) and returns its token count.
std::uint64_t count_prompt(std::string_view s, const parse_settings& settings) {
  return settings.tokenizer != nullptr ? settings.tokenizer->count(s)
                                       : tokenizer::count_tokens(s);
}

std::optional<std::uint64_t> one_input(const Value& v, std::string& text,
                                       const parse_settings& settings) {
  if (v.IsString()) {
    std::string_view s{v.GetString(), v.GetStringLength()};
    text.append(s);
    return count_prompt(s, settings);
  }
  if (v.IsArray()) {
    std::uint64_t n = 0;
    for (const auto& id : v.GetArray()) {
      if (!id.IsUint64())
        return std::nullopt;
      if (n > 0)
        text.push_back(' ');
      append_int(text, static_cast<std::int64_t>(id.GetUint64()));
      ++n;
    }
    return n;
  }
  return std::nullopt;
}

// `prompt` (completions) or `input` (embeddings): string, array of strings,
// token-id array, or array of token-id arrays. Fills one text per input.
std::optional<api_error> collect_inputs(const Value& v, const char* field,
                                        std::vector<std::string>& texts,
                                        std::uint64_t& tokens,
                                        const parse_settings& settings) {
  auto bad = [&] {
    return invalid(std::string{"'"} + field
                       + "' must be a string, an array of strings, an array "
                         "of token ids, or an array of token-id arrays",
                   field, "invalid_type");
  };
  auto add = [&](const Value& one) -> bool {
    texts.emplace_back();
    auto n = one_input(one, texts.back(), settings);
    if (!n)
      return false;
    tokens += *n;
    return true;
  };
  if (v.IsString()) {
    if (!add(v))
      return bad();
  } else if (v.IsArray()) {
    if (v.Empty())
      return invalid(std::string{"'"} + field + "' must not be empty", field);
    if (v[0].IsUint64()) { // one token-id array
      if (!add(v))
        return bad();
    } else {
      for (const auto& one : v.GetArray())
        if (!add(one))
          return bad();
    }
  } else {
    return bad();
  }
  return std::nullopt;
}

constexpr std::string_view b64_alphabet
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void append_base64(std::string& out, const unsigned char* p, std::size_t n) {
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    std::uint32_t v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out.push_back(b64_alphabet[(v >> 18) & 63]);
    out.push_back(b64_alphabet[(v >> 12) & 63]);
    out.push_back(b64_alphabet[(v >> 6) & 63]);
    out.push_back(b64_alphabet[v & 63]);
  }
  if (n - i == 1) {
    std::uint32_t v = p[i] << 16;
    out.push_back(b64_alphabet[(v >> 18) & 63]);
    out.push_back(b64_alphabet[(v >> 12) & 63]);
    out.append("==");
  } else if (n - i == 2) {
    std::uint32_t v = (p[i] << 16) | (p[i + 1] << 8);
    out.push_back(b64_alphabet[(v >> 18) & 63]);
    out.push_back(b64_alphabet[(v >> 12) & 63]);
    out.push_back(b64_alphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
}

void append_stamp(std::string& out, std::optional<std::int64_t> stamp_ns) {
  if (!stamp_ns)
    return;
  out.append(": t=");
  append_int(out, *stamp_ns);
  out.push_back('\n');
}

void append_head(std::string& out, const generation& g, std::string_view id,
                 std::int64_t created, std::string_view object) {
  out.append(R"({"id":")");
  out.append(id);
  out.append(R"(","object":")");
  out.append(object);
  out.append(R"(","created":)");
  append_int(out, created);
  out.append(R"(,"model":")");
  append_json_escaped(out, g.model);
  out.append(R"(",)");
}

void append_usage(std::string& out, const generation& g) {
  out.append(R"("usage":{"prompt_tokens":)");
  append_int(out, static_cast<std::int64_t>(g.prompt_tokens));
  out.append(R"(,"completion_tokens":)");
  append_int(out, static_cast<std::int64_t>(g.completion_tokens));
  out.append(R"(,"total_tokens":)");
  append_int(out,
             static_cast<std::int64_t>(g.prompt_tokens + g.completion_tokens));
  out.append(R"(,"completion_tokens_details":{"reasoning_tokens":0}})");
}

std::string_view finish_reason(const generation& g) {
  return g.length_limited ? "length" : "stop";
}

} // namespace

std::string error_body(std::string_view message, std::string_view type,
                       std::string_view param, std::string_view code) {
  std::string out = R"({"error":{"message":")";
  append_json_escaped(out, message);
  out.append(R"(","type":")");
  append_json_escaped(out, type);
  out.append(R"(","param":)");
  if (param.empty()) {
    out.append("null");
  } else {
    out.push_back('"');
    append_json_escaped(out, param);
    out.push_back('"');
  }
  out.append(R"(,"code":)");
  if (code.empty()) {
    out.append("null");
  } else {
    out.push_back('"');
    append_json_escaped(out, code);
    out.push_back('"');
  }
  out.append("}}");
  return out;
}

void append_json_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
    case '"':
      out.append("\\\"");
      break;
    case '\\':
      out.append("\\\\");
      break;
    case '\n':
      out.append("\\n");
      break;
    case '\r':
      out.append("\\r");
      break;
    case '\t':
      out.append("\\t");
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        constexpr char hex[] = "0123456789abcdef";
        out.append("\\u00");
        out.push_back(hex[(c >> 4) & 0xf]);
        out.push_back(hex[c & 0xf]);
      } else {
        out.push_back(c);
      }
    }
  }
}

std::variant<generation, api_error>
parse_request(endpoint kind, std::string_view content_type,
              std::string_view body, const parse_settings& settings) {
  // OpenAI answers a non-JSON content type with 400 invalid_request_error
  // (it cannot parse the body), not 415; we do the same.
  if (!is_json_content_type(content_type))
    return invalid("Content-Type must be application/json (got '"
                   + std::string{content_type}
                   + "'); send the request body as JSON");
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError())
    return invalid(std::string{"We could not parse the JSON body of your "
                               "request: "}
                   + rapidjson::GetParseError_En(doc.GetParseError())
                   + " at offset " + std::to_string(doc.GetErrorOffset()));
  if (!doc.IsObject())
    return invalid("the request body must be a JSON object");

  generation g;
  g.kind = kind;
  auto model = doc.FindMember("model");
  if (model == doc.MemberEnd())
    return invalid("you must provide a model parameter", "model",
                   "missing_required_parameter");
  if (!model->value.IsString())
    return invalid("'model' must be a string", "model", "invalid_type");
  g.model.assign(model->value.GetString(), model->value.GetStringLength());
  if (!settings.model_names.empty()
      && std::find(settings.model_names.begin(), settings.model_names.end(),
                   g.model)
             == settings.model_names.end())
    return api_error{404, error_body("The model `" + g.model
                                         + "` does not exist or you do not "
                                           "have access to it.",
                                     "invalid_request_error", "model",
                                     "model_not_found")};

  std::vector<std::string> texts;
  std::uint64_t prompt_tokens = 0;
  if (kind == endpoint::chat) {
    auto messages = doc.FindMember("messages");
    if (messages == doc.MemberEnd())
      return invalid("Missing required parameter: 'messages'.", "messages",
                     "missing_required_parameter");
    if (!messages->value.IsArray() || messages->value.Empty())
      return invalid("'messages' must be a non-empty array", "messages",
                     "invalid_type");
    texts.emplace_back();
    if (auto err = collect_chat_text(messages->value, texts.back()))
      return *err;
    prompt_tokens = count_prompt(texts.back(), settings);
  } else {
    const char* field = kind == endpoint::completions ? "prompt" : "input";
    auto in = doc.FindMember(field);
    if (in == doc.MemberEnd())
      return invalid(std::string{"Missing required parameter: '"} + field
                         + "'.",
                     field, "missing_required_parameter");
    if (auto err
        = collect_inputs(in->value, field, texts, prompt_tokens, settings))
      return *err;
  }
  g.prompt_tokens = prompt_tokens;

  if (kind == endpoint::embeddings) {
    g.dimensions = settings.embedding_dims;
    std::optional<std::uint64_t> dims;
    if (auto err = read_count(doc, "dimensions", 1, dims))
      return *err;
    if (dims && *dims > 8192)
      return invalid("'dimensions' must be at most 8192", "dimensions",
                     "integer_out_of_range");
    if (dims)
      g.dimensions = static_cast<unsigned>(*dims);
    auto fmt = doc.FindMember("encoding_format");
    if (fmt != doc.MemberEnd() && !fmt->value.IsNull()) {
      std::string_view f = fmt->value.IsString() ? fmt->value.GetString() : "";
      if (f == "base64")
        g.base64 = true;
      else if (f != "float")
        return invalid("'encoding_format' must be 'float' or 'base64'",
                       "encoding_format", "invalid_value");
    }
    for (const auto& t : texts)
      g.input_seeds.push_back(tokenizer::hash(t) ^ settings.random_seed);
    return g;
  }

  // Completions with several prompts: joined like chat messages.
  std::string prompt_text;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i > 0)
      prompt_text.push_back(' ');
    prompt_text.append(texts[i]);
  }
  g.seed = tokenizer::hash(prompt_text) ^ settings.random_seed;

  if (auto err = read_bool(doc, "stream", g.stream))
    return *err;
  auto so = doc.FindMember("stream_options");
  if (so != doc.MemberEnd() && !so->value.IsNull()) {
    if (!so->value.IsObject())
      return invalid("'stream_options' must be an object", "stream_options",
                     "invalid_type");
    if (auto err = read_bool(so->value, "include_usage", g.include_usage))
      return *err;
  }
  std::optional<std::uint64_t> max_completion;
  std::optional<std::uint64_t> max_tokens;
  std::optional<std::uint64_t> min_tokens;
  bool ignore_eos = false;
  if (auto err = read_count(doc, "max_completion_tokens", 1, max_completion))
    return *err;
  if (auto err = read_count(doc, "max_tokens", 1, max_tokens))
    return *err;
  if (auto err = read_count(doc, "min_tokens", 0, min_tokens))
    return *err;
  if (auto err = read_bool(doc, "ignore_eos", ignore_eos))
    return *err;
  auto max = max_completion ? max_completion : max_tokens;
  if (max && min_tokens && *min_tokens > *max)
    return invalid("'min_tokens' (" + std::to_string(*min_tokens)
                       + ") must not exceed the maximum ("
                       + std::to_string(*max) + ")",
                   "min_tokens", "invalid_value");
  if (max) {
    g.output_tokens = *max;
    g.length_limited = true;
  } else {
    auto natural = std::max<std::uint64_t>(16, prompt_tokens);
    natural = std::min(natural, settings.default_max_tokens);
    g.output_tokens = std::max(natural, min_tokens.value_or(0));
    g.output_tokens = std::max<std::uint64_t>(g.output_tokens, 1);
  }
  g.completion_tokens = g.output_tokens;
  if (settings.tokenizer != nullptr && settings.tokenizer->has_ids()) {
    std::string text;
    text.reserve(8 * g.output_tokens);
    for (std::uint64_t i = 0; i < g.output_tokens; ++i)
      tokenizer::append_token(text, g.seed, i);
    g.completion_tokens = settings.tokenizer->count(text);
  }
  return g;
}

void append_token_event(std::string& out, const generation& g,
                        std::string_view id, std::int64_t created,
                        std::uint64_t i, std::optional<std::int64_t> stamp_ns) {
  append_stamp(out, stamp_ns);
  out.append("data: ");
  const bool chat = g.kind == endpoint::chat;
  append_head(out, g, id, created,
              chat ? "chat.completion.chunk" : "text_completion");
  if (chat)
    out.append(
        i == 0
            ? R"("choices":[{"index":0,"delta":{"role":"assistant","content":")"
            : R"("choices":[{"index":0,"delta":{"content":")");
  else
    out.append(R"("choices":[{"index":0,"text":")");
  tokenizer::append_token(out, g.seed, i); // vocabulary words: no escaping
  out.append(chat ? R"("},"finish_reason":)" : R"(","finish_reason":)");
  if (i + 1 == g.output_tokens) {
    out.push_back('"');
    out.append(finish_reason(g));
    out.push_back('"');
  } else {
    out.append("null");
  }
  out.append("}]}\n\n");
}

void append_usage_event(std::string& out, const generation& g,
                        std::string_view id, std::int64_t created,
                        std::optional<std::int64_t> stamp_ns) {
  append_stamp(out, stamp_ns);
  out.append("data: ");
  append_head(out, g, id, created,
              g.kind == endpoint::chat ? "chat.completion.chunk"
                                       : "text_completion");
  out.append(R"("choices":[],)");
  append_usage(out, g);
  out.append("}\n\n");
}

void append_done_event(std::string& out, std::optional<std::int64_t> stamp_ns) {
  append_stamp(out, stamp_ns);
  out.append("data: [DONE]\n\n");
}

std::string render_stream(const generation& g, std::string_view id,
                          std::int64_t created) {
  std::string out;
  out.reserve(200 * (g.output_tokens + 2));
  for (std::uint64_t i = 0; i < g.output_tokens; ++i)
    append_token_event(out, g, id, created, i);
  if (g.include_usage)
    append_usage_event(out, g, id, created);
  append_done_event(out);
  return out;
}

std::string render_completion(const generation& g, std::string_view id,
                              std::int64_t created) {
  std::string out;
  out.reserve(256 + 8 * g.output_tokens);
  const bool chat = g.kind == endpoint::chat;
  append_head(out, g, id, created,
              chat ? "chat.completion" : "text_completion");
  out.append(
      chat
          ? R"("choices":[{"index":0,"message":{"role":"assistant","content":")"
          : R"("choices":[{"index":0,"text":")");
  for (std::uint64_t i = 0; i < g.output_tokens; ++i)
    tokenizer::append_token(out, g.seed, i);
  out.append(chat ? R"("},"logprobs":null,"finish_reason":")"
                  : R"(","logprobs":null,"finish_reason":")");
  out.append(finish_reason(g));
  out.append(R"("}],)");
  append_usage(out, g);
  out.append("}");
  return out;
}

std::vector<float> embedding_vector(std::uint64_t seed, unsigned dimensions) {
  std::vector<float> v(dimensions);
  double norm = 0;
  std::uint64_t state = seed;
  for (auto& x : v) {
    // 53 random bits -> [-1, 1)
    double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    x = static_cast<float>(2 * u - 1);
    norm += static_cast<double>(x) * x;
  }
  norm = std::sqrt(norm);
  if (norm > 0)
    for (auto& x : v)
      x = static_cast<float>(x / norm);
  return v;
}

std::string render_embeddings(const generation& g) {
  std::string out = R"({"object":"list","data":[)";
  for (std::size_t j = 0; j < g.input_seeds.size(); ++j) {
    if (j > 0)
      out.push_back(',');
    out.append(R"({"object":"embedding","index":)");
    append_int(out, static_cast<std::int64_t>(j));
    out.append(R"(,"embedding":)");
    auto v = embedding_vector(g.input_seeds[j], g.dimensions);
    if (g.base64) {
      // OpenAI's base64 format: little-endian float32 bytes.
      static_assert(sizeof(float) == 4);
      std::string bytes(v.size() * 4, '\0');
      std::memcpy(bytes.data(), v.data(), bytes.size());
      out.push_back('"');
      append_base64(out, reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size());
      out.push_back('"');
    } else {
      out.push_back('[');
      char buf[32];
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (k > 0)
          out.push_back(',');
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v[k]);
        (void)ec;
        out.append(buf, end);
      }
      out.push_back(']');
    }
    out.push_back('}');
  }
  out.append(R"(],"model":")");
  append_json_escaped(out, g.model);
  out.append(R"(","usage":{"prompt_tokens":)");
  append_int(out, static_cast<std::int64_t>(g.prompt_tokens));
  out.append(R"(,"total_tokens":)");
  append_int(out, static_cast<std::int64_t>(g.prompt_tokens));
  out.append("}}");
  return out;
}

std::string render_models(const std::vector<std::string>& names) {
  std::string out = R"({"object":"list","data":[)";
  auto one = [&](std::string_view name) {
    out.append(R"({"id":")");
    append_json_escaped(out, name);
    out.append(R"(","object":"model","created":0,"owned_by":"aiperf-mock"})");
  };
  if (names.empty())
    one("mock-model");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      out.push_back(',');
    one(names[i]);
  }
  out.append("]}");
  return out;
}

} // namespace aiperf::mock_server
