#include "actors/benchmark/dataset/input_file.hpp"

#include "proto/utf8.hpp"
#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_map>

namespace aiperf::dataset {

namespace {

using json = rapidjson::Value;

// SplitMix64: a fast bijective mixer; word k of hash block `id` is
// word(mix(id, k)), so the block text is a function of the id alone.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Collects the errors of one line; every check names the field and the fix.
struct line_context {
  std::size_t line;
  std::vector<load_error>& errors;
  /// file_options::stop (may be null).
  const std::atomic<bool>* stop = nullptr;
  bool ok = true;

  void fail(std::string field, std::string message) {
    ok = false;
    errors.push_back({line, std::move(field), std::move(message)});
  }
};

std::string join_path(const std::string& prefix, std::string_view field) {
  if (prefix.empty())
    return std::string{field};
  return prefix + "." + std::string{field};
}

const json* find(const json& obj, std::string_view name) {
  auto it = obj.FindMember(
      json(name.data(), static_cast<rapidjson::SizeType>(name.size())));
  if (it == obj.MemberEnd() || it->value.IsNull())
    return nullptr;
  return &it->value;
}

// Reads an optional non-negative millisecond field (timestamp, delay).
// Fractional ms are rounded: some traces carry them.
std::int64_t read_ms(line_context& ctx, const json& obj,
                     const std::string& prefix, std::string_view name) {
  const json* v = find(obj, name);
  if (v == nullptr)
    return -1;
  const auto path = join_path(prefix, name);
  if (!v->IsNumber()) {
    ctx.fail(path, "must be a number of milliseconds; write e.g. "
                       + std::string{name} + ": 1500");
    return -1;
  }
  const double ms = v->GetDouble();
  if (!std::isfinite(ms) || ms < 0 || ms > 9.0e15) {
    ctx.fail(path, "must be >= 0 (milliseconds); remove the sign or the "
                   "field");
    return -1;
  }
  return v->IsInt64() ? v->GetInt64() : std::llround(ms);
}

// Reads an optional token count; `min` is the smallest valid value.
// Most tokens a length field may ask for (config::max_sequence_tokens, the
// --isl bound): each prompt is built in memory, ~6 bytes a token.
constexpr std::int64_t max_length_tokens = 1'000'000;

std::optional<std::int64_t> read_length(line_context& ctx, const json& obj,
                                        const std::string& prefix,
                                        std::string_view name,
                                        std::int64_t min) {
  const json* v = find(obj, name);
  if (v == nullptr)
    return std::nullopt;
  const auto path = join_path(prefix, name);
  if (!v->IsInt64()) {
    ctx.fail(path, "must be an integer number of tokens; write e.g. "
                       + std::string{name} + ": 128");
    return std::nullopt;
  }
  const auto n = v->GetInt64();
  if (n < min || n > max_length_tokens) {
    ctx.fail(path, n < 0 ? "must not be negative; use a token count >= "
                               + std::to_string(min)
                         : "must be between " + std::to_string(min) + " and "
                               + std::to_string(max_length_tokens)
                               + " tokens (each prompt is built in memory)");
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> read_session_id(line_context& ctx, const json& obj,
                                           const std::string& prefix) {
  const json* v = find(obj, "session_id");
  if (v == nullptr)
    return std::nullopt;
  if (!v->IsString() || v->GetStringLength() == 0) {
    ctx.fail(join_path(prefix, "session_id"),
             "must be a non-empty string; quote it or remove the field");
    return std::nullopt;
  }
  return std::string{v->GetString(), v->GetStringLength()};
}

void reject_unsupported(line_context& ctx, const json& obj,
                        const std::string& prefix) {
  for (std::string_view name : {"image", "images", "audio", "audios", "video",
                                "videos", "messages", "tools"}) {
    if (find(obj, name) != nullptr)
      ctx.fail(join_path(prefix, name),
               "is not supported (text-only build); remove the field or "
               "convert the entry to text");
  }
}

bool stopped(const std::atomic<bool>* stop) noexcept {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
         || c == '\v';
}

// Bytes of a prompt tokenized between two looks at the stop flag (~1 ms).
constexpr std::size_t tokenize_slice = std::size_t{1} << 20;

// Tokenizes in slices cut where a word ends (a byte of a word, then a
// space): the built-in count adds up across such a cut. A stopped count is
// wrong, and is dropped with the whole load.
std::size_t count_tokens(std::string_view text, const std::atomic<bool>* stop) {
  std::size_t total = 0;
  std::size_t pos = 0;
  while (text.size() - pos > tokenize_slice) {
    if (stopped(stop))
      return total;
    auto cut = pos + tokenize_slice;
    while (cut < text.size()
           && !(is_space(text[cut]) && !is_space(text[cut - 1])))
      ++cut;
    if (cut >= text.size())
      break;
    total += tokenizer::count_for_metrics(text.substr(pos, cut - pos));
    pos = cut;
  }
  return total + tokenizer::count_for_metrics(text.substr(pos));
}

// append_hash_block, looking at `stop` every 65,536 tokens (~1 ms): a
// trace line may ask for a million. A stopped text is dropped with the load.
void append_block(std::string& out, std::uint64_t id, std::uint32_t tokens,
                  const std::atomic<bool>* stop) {
  const auto key = mix(id);
  for (std::uint32_t k = 0; k < tokens; ++k) {
    if ((k & 0xFFFF) == 0xFFFF && stopped(stop))
      return;
    if (k != 0)
      out.push_back(' ');
    out.append(tokenizer::word(mix(key + k)));
  }
}

void finish_turn_tokens(turn& t, const std::atomic<bool>* stop) {
  t.input_tokens = static_cast<std::uint32_t>(std::min<std::size_t>(
      count_tokens(t.text, stop), std::numeric_limits<std::uint32_t>::max()));
}

// Parses one single_turn object (a line, or an element of `turns`).
std::optional<turn> parse_single_turn(line_context& ctx, const json& obj,
                                      const std::string& prefix) {
  if (!obj.IsObject()) {
    ctx.fail(prefix, "must be a JSON object like {\"text\": \"...\"}");
    return std::nullopt;
  }
  reject_unsupported(ctx, obj, prefix);
  turn t;
  const json* text = find(obj, "text");
  const json* texts = find(obj, "texts");
  if (text != nullptr && texts != nullptr) {
    ctx.fail(join_path(prefix, "texts"),
             "give either text or texts, not both; merge them into texts");
  } else if (text != nullptr) {
    if (!text->IsString())
      ctx.fail(join_path(prefix, "text"), "must be a string; quote the prompt");
    else
      t.text.assign(text->GetString(), text->GetStringLength());
  } else if (texts != nullptr) {
    if (!texts->IsArray() || texts->Empty()) {
      ctx.fail(join_path(prefix, "texts"),
               "must be a non-empty array of strings; write [\"...\"]");
    } else {
      for (rapidjson::SizeType i = 0; i < texts->Size(); ++i) {
        const auto& piece = (*texts)[i];
        if (!piece.IsString()) {
          ctx.fail(join_path(prefix, "texts[" + std::to_string(i) + "]"),
                   "must be a string; quote the prompt piece");
          continue;
        }
        if (i != 0)
          t.text.push_back(' ');
        t.text.append(piece.GetString(), piece.GetStringLength());
      }
    }
  } else {
    ctx.fail(join_path(prefix, "text"),
             "is required; add \"text\": \"<prompt>\" or \"texts\": [...]");
  }
  t.timestamp_ms = read_ms(ctx, obj, prefix, "timestamp");
  t.delay_ms = read_ms(ctx, obj, prefix, "delay");
  if (auto osl = read_length(ctx, obj, prefix, "output_length", 1))
    t.max_output_tokens = static_cast<std::int32_t>(*osl);
  // A per-turn model wins over --model-selection-strategy (as in AIPerf).
  if (const json* model = find(obj, "model")) {
    if (!model->IsString() || model->GetStringLength() == 0)
      ctx.fail(join_path(prefix, "model"),
               "must be a non-empty string naming the model; quote it or "
               "remove the field to use --model");
    else
      t.model.assign(model->GetString(), model->GetStringLength());
  }
  finish_turn_tokens(t, ctx.stop);
  return t;
}

// Groups turns by explicit session id, keeping first-appearance order.
class conversation_builder {
public:
  void add(std::optional<std::string> session, std::size_t line, turn t) {
    if (!session) {
      out_.push_back({"line-" + std::to_string(line), {std::move(t)}});
      return;
    }
    auto [it, added] = index_.try_emplace(*session, out_.size());
    if (added)
      out_.push_back({std::move(*session), {}});
    out_[it->second].turns.push_back(std::move(t));
  }

  /// Returns whether `session` already has turns.
  bool continues(const std::optional<std::string>& session) const {
    return session && index_.count(*session) != 0;
  }

  std::vector<conversation> take() { return std::move(out_); }

private:
  std::vector<conversation> out_;
  std::unordered_map<std::string, std::size_t> index_;
};

void parse_mooncake_line(line_context& ctx, const json& obj,
                         const file_options& opts,
                         conversation_builder& convs) {
  reject_unsupported(ctx, obj, "");
  auto session = read_session_id(ctx, obj, "");
  turn t;
  t.timestamp_ms = read_ms(ctx, obj, "", "timestamp");
  t.delay_ms = read_ms(ctx, obj, "", "delay");
  if (t.timestamp_ms < 0 && ctx.ok && !convs.continues(session))
    ctx.fail("timestamp", "is required on the first request of a session; add "
                          "\"timestamp\": <ms since trace start>");
  if (auto osl = read_length(ctx, obj, "", "output_length", 1))
    t.max_output_tokens = static_cast<std::int32_t>(*osl);
  const auto isl = read_length(ctx, obj, "", "input_length", 1);

  if (const json* text = find(obj, "text_input")) {
    // An explicit prompt wins over synthesised blocks.
    if (!text->IsString())
      ctx.fail("text_input", "must be a string; quote the prompt");
    else
      t.text.assign(text->GetString(), text->GetStringLength());
  } else if (!isl) {
    if (ctx.ok)
      ctx.fail("input_length",
               "is required without text_input; add \"input_length\": "
               "<prompt tokens>");
  } else if (const json* ids = find(obj, "hash_ids")) {
    if (!ids->IsArray()) {
      ctx.fail("hash_ids", "must be an array of non-negative integers");
    } else {
      const auto n = static_cast<std::int64_t>(ids->Size());
      const auto bs = static_cast<std::int64_t>(opts.block_size);
      if (n == 0 || *isl <= (n - 1) * bs || *isl > n * bs) {
        ctx.fail("hash_ids", std::to_string(n) + " blocks of "
                                 + std::to_string(bs)
                                 + " tokens cannot hold input_length "
                                 + std::to_string(*isl) + "; need (n-1)*"
                                 + std::to_string(bs) + " < input_length <= n*"
                                 + std::to_string(bs)
                                 + " (fix input_length, hash_ids or "
                                   "--isl-block-size)");
      } else {
        std::int64_t left = *isl;
        for (rapidjson::SizeType i = 0; i < ids->Size(); ++i) {
          const auto& id = (*ids)[i];
          if (!id.IsUint64()) {
            ctx.fail("hash_ids[" + std::to_string(i) + "]",
                     "must be a non-negative integer");
            break;
          }
          if (i != 0)
            t.text.push_back(' ');
          const auto tokens = static_cast<std::uint32_t>(std::min(left, bs));
          append_block(t.text, id.GetUint64(), tokens, ctx.stop);
          left -= tokens;
        }
      }
    }
  } else {
    // No blocks: a per-line text, deterministic but shared with nothing.
    append_block(t.text,
                 mix(0x6c696e65ULL ^ static_cast<std::uint64_t>(ctx.line)),
                 static_cast<std::uint32_t>(*isl), ctx.stop);
  }
  if (!ctx.ok)
    return;
  finish_turn_tokens(t, ctx.stop);
  convs.add(std::move(session), ctx.line, std::move(t));
}

void parse_line(line_context& ctx, const json& obj, input_file_type type,
                const file_options& opts, conversation_builder& convs) {
  switch (type) {
  case input_file_type::single_turn: {
    auto session = read_session_id(ctx, obj, "");
    auto t = parse_single_turn(ctx, obj, "");
    if (ctx.ok)
      convs.add(std::move(session), ctx.line, std::move(*t));
    return;
  }
  case input_file_type::multi_turn: {
    auto session = read_session_id(ctx, obj, "");
    const json* turns = find(obj, "turns");
    if (turns == nullptr || !turns->IsArray() || turns->Empty()) {
      ctx.fail("turns", "is required: a non-empty array of turn objects "
                        "like [{\"text\": \"...\"}]");
      return;
    }
    conversation conv;
    for (rapidjson::SizeType i = 0; i < turns->Size(); ++i) {
      auto t = parse_single_turn(ctx, (*turns)[i],
                                 "turns[" + std::to_string(i) + "]");
      if (t)
        conv.turns.push_back(std::move(*t));
    }
    if (!ctx.ok)
      return;
    // Each line is one conversation; a repeated session_id appends turns.
    for (auto& t : conv.turns)
      convs.add(session, ctx.line, std::move(t));
    return;
  }
  case input_file_type::mooncake_trace:
    parse_mooncake_line(ctx, obj, opts, convs);
    return;
  }
}

} // namespace

std::optional<input_file_type> parse_input_file_type(std::string_view name) {
  if (name == "single_turn")
    return input_file_type::single_turn;
  if (name == "multi_turn")
    return input_file_type::multi_turn;
  if (name == "mooncake_trace")
    return input_file_type::mooncake_trace;
  return std::nullopt;
}

std::string load_error::to_string() const {
  std::string out = "line " + std::to_string(line) + ": ";
  if (!field.empty())
    out += field + ": ";
  return out + message;
}

void append_hash_block(std::string& out, std::uint64_t id,
                       std::uint32_t tokens) {
  append_block(out, id, tokens, nullptr);
}

namespace {

// The error of `errors` (not empty) found in `source`.
caf::error input_error(errc code, const std::string& source,
                       std::vector<load_error> errors) {
  std::string msg = source + ":";
  const auto listed = std::min(errors.size(), listed_load_errors);
  for (std::size_t i = 0; i < listed; ++i)
    msg += "\n  " + errors[i].to_string();
  if (errors.size() > listed)
    msg += "\n  ... and " + std::to_string(errors.size() - listed) + " more";
  return make_error(code, std::move(msg), std::move(errors));
}

// The error of a load that file_options::stop stopped.
caf::error cancelled_error(const std::string& source) {
  return make_error(errc::cancelled, "stopped while loading " + source
                                         + "; nothing was exported");
}

// Parses `content`; the dataset, or nullopt with every problem in `errors`
// (none when `cancelled` was set: stopped by file_options::stop).
std::optional<dataset> parse_content(std::string_view content,
                                     input_file_type type,
                                     const file_options& opts,
                                     std::vector<load_error>& errors,
                                     bool& cancelled) {
  cancelled = false;
  if (opts.block_size == 0) {
    errors.push_back({0, "block_size", "must be >= 1; set --isl-block-size"});
    return std::nullopt;
  }
  conversation_builder convs;
  std::size_t line_no = 0;
  std::size_t objects = 0;
  std::size_t pos = 0;
  // Generated `line-N` ids never merge with explicit ones: only explicit ids
  // are looked up when grouping.
  while (pos <= content.size()) {
    auto end = content.find('\n', pos);
    if (end == std::string_view::npos)
      end = content.size();
    auto line = content.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    while (
        !line.empty()
        && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      if (end == content.size())
        break;
      continue;
    }
    if (stopped(opts.stop)) {
      cancelled = true;
      return std::nullopt;
    }
    ++objects;
    line_context ctx{line_no, errors, opts.stop};
    rapidjson::Document doc;
    // The text is sent to servers and copied into inputs.json: it must be
    // UTF-8 (the parser would let other bytes through).
    if (auto bad = utf8::first_invalid(line); bad != std::string_view::npos) {
      ctx.fail("", "invalid UTF-8 at column " + std::to_string(bad + 1)
                       + "; save the input file as UTF-8");
    } else if (doc.Parse(line.data(), line.size()); doc.HasParseError()) {
      ctx.fail("", std::string{"invalid JSON at column "}
                       + std::to_string(doc.GetErrorOffset() + 1) + ": "
                       + rapidjson::GetParseError_En(doc.GetParseError())
                       + "; write one complete JSON object per line");
    } else if (!doc.IsObject()) {
      ctx.fail("", "must be a JSON object ({...}); write one object per line");
    } else {
      parse_line(ctx, doc, type, opts, convs);
    }
    if (end == content.size())
      break;
  }
  if (stopped(opts.stop)) { // during the last line
    cancelled = true;
    return std::nullopt;
  }
  if (objects == 0)
    errors.push_back(
        {0, "",
         "the input file has no JSON lines; add one JSON object per line"});
  if (!errors.empty())
    return std::nullopt;
  dataset data;
  data.conversations = convs.take();
  data.has_timestamps = !data.conversations.empty();
  for (const auto& conv : data.conversations)
    if (conv.turns.front().timestamp_ms < 0)
      data.has_timestamps = false;
  return data;
}

} // namespace

caf::expected<dataset> parse_input_file(std::string_view content,
                                        input_file_type type,
                                        const file_options& opts) {
  std::vector<load_error> errors;
  bool cancelled = false;
  auto data = parse_content(content, type, opts, errors, cancelled);
  if (cancelled)
    return cancelled_error("the input file");
  if (!data)
    return input_error(errc::bad_input, "input file", std::move(errors));
  return std::move(*data);
}

caf::expected<dataset> load_input_file(const std::string& path,
                                       input_file_type type,
                                       const file_options& opts) {
  const auto source = "--input-file " + path;
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return input_error(
        errc::io, source,
        {{0, "", "cannot open input file '" + path + "'; check --input-file"}});
  // Read in slices, looking at the stop flag between them: a file of
  // gigabytes takes seconds to read.
  constexpr std::size_t read_slice = std::size_t{16} << 20;
  std::string content;
  std::error_code ec;
  // Room for the last, short read too: growing past the file's size would
  // copy the whole file in one go (seconds for a large one, no stop check).
  if (auto size = std::filesystem::file_size(path, ec); !ec)
    content.reserve(size + read_slice);
  for (;;) {
    if (stopped(opts.stop))
      return cancelled_error(source);
    const auto had = content.size();
    content.resize(had + read_slice);
    in.read(content.data() + had, static_cast<std::streamsize>(read_slice));
    content.resize(had + static_cast<std::size_t>(in.gcount()));
    if (!in)
      break;
  }
  if (in.bad())
    return input_error(
        errc::io, source,
        {{0, "", "cannot read input file '" + path + "'; check --input-file"}});
  std::vector<load_error> errors;
  bool cancelled = false;
  auto data = parse_content(content, type, opts, errors, cancelled);
  if (cancelled)
    return cancelled_error(source);
  if (!data)
    return input_error(errc::bad_input, source, std::move(errors));
  return std::move(*data);
}

} // namespace aiperf::dataset
