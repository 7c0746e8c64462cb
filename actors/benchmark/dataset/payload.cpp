#include "actors/benchmark/dataset/payload.hpp"

#include "runtime/io/durable_file.hpp"

// Every x86-64 CPU has SSE2; RapidJSON then copies runs of unescaped string
// bytes 16 at a time (Writer<StringBuffer> only), ~5x faster for prompts.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>

namespace aiperf::dataset {

namespace {

// RapidJSON output stream appending to a std::string we own, so the buffer's
// capacity is reused across requests.
struct string_sink {
  using Ch = char;
  std::string* out;
  void Put(char c) { out->push_back(c); }
  void Flush() {}
};

using writer = rapidjson::Writer<string_sink>;
using body_writer = rapidjson::Writer<rapidjson::StringBuffer>;

template <class Writer> void write_string(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::vector<std::pair<std::string, std::string>>
parse_extras(const std::string& json) {
  std::vector<std::pair<std::string, std::string>> out;
  if (json.empty())
    return out;
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject())
    return out;
  for (auto& m : doc.GetObject()) {
    std::string value;
    string_sink sink{&value};
    writer w{sink};
    m.value.Accept(w);
    out.emplace_back(std::string{m.name.GetString(), m.name.GetStringLength()},
                     std::move(value));
  }
  return out;
}

} // namespace

std::optional<endpoint_type> parse_endpoint_type(std::string_view name) {
  if (name == "chat")
    return endpoint_type::chat;
  if (name == "completions")
    return endpoint_type::completions;
  if (name == "embeddings")
    return endpoint_type::embeddings;
  return std::nullopt;
}

caf::expected<void> validate(const payload_options& opts) {
  if (opts.model.empty())
    return make_error(errc::bad_option,
                      "model: must not be empty; set --model");
  if (!opts.extra_inputs_json.empty()) {
    rapidjson::Document doc;
    doc.Parse(opts.extra_inputs_json.c_str(), opts.extra_inputs_json.size());
    if (doc.HasParseError() || !doc.IsObject())
      return make_error(errc::bad_option,
                        "extra_inputs: must be a JSON object like "
                        "{\"ignore_eos\": true}; fix --extra-inputs");
  }
  return caf::unit;
}

struct payload_builder::buffer {
  rapidjson::StringBuffer out;
};

payload_builder::payload_builder(payload_options opts)
    : opts_(std::move(opts)), extras_(parse_extras(opts_.extra_inputs_json)),
      buffer_(std::make_unique<buffer>()) {
  // nop
}

payload_builder::~payload_builder() = default;
payload_builder::payload_builder(payload_builder&&) noexcept = default;
payload_builder&
payload_builder::operator=(payload_builder&&) noexcept = default;

std::string_view
payload_builder::build(const conversation& conv, std::size_t turn_index,
                       const std::vector<std::string>& assistant_replies) {
  auto& out = buffer_->out;
  out.Clear(); // keeps the capacity
  if (conv.turns.empty()) {
    // A loader never yields one; an empty object beats reading past the end.
    return "{}";
  }
  body_writer w{out};
  const auto overridden = [this](std::string_view key) {
    return std::any_of(extras_.begin(), extras_.end(),
                       [key](const auto& kv) { return kv.first == key; });
  };
  const auto last = std::min(turn_index, conv.turns.size() - 1);
  const turn& current = conv.turns[last];
  w.StartObject();
  if (!overridden("model")) {
    w.Key("model");
    write_string(w, current.model.empty() ? opts_.model : current.model);
  }
  switch (opts_.endpoint) {
  case endpoint_type::chat:
    if (!overridden("messages")) {
      w.Key("messages");
      w.StartArray();
      for (std::size_t i = 0; i <= last; ++i) {
        w.StartObject();
        w.Key("role");
        w.String("user");
        w.Key("content");
        write_string(w, conv.turns[i].text);
        w.EndObject();
        if (i < last && i < assistant_replies.size()) {
          w.StartObject();
          w.Key("role");
          w.String("assistant");
          w.Key("content");
          write_string(w, assistant_replies[i]);
          w.EndObject();
        }
      }
      w.EndArray();
    }
    break;
  case endpoint_type::completions:
    if (!overridden("prompt")) {
      std::string prompt;
      for (std::size_t i = 0; i <= last; ++i) {
        if (i != 0)
          prompt.push_back(' ');
        prompt.append(conv.turns[i].text);
        if (i < last && i < assistant_replies.size()) {
          prompt.push_back(' ');
          prompt.append(assistant_replies[i]);
        }
      }
      w.Key("prompt");
      write_string(w, prompt);
    }
    break;
  case endpoint_type::embeddings:
    if (!overridden("input")) {
      w.Key("input");
      w.StartArray();
      write_string(w, current.text);
      w.EndArray();
    }
    break;
  }
  if (opts_.endpoint != endpoint_type::embeddings) {
    if (!overridden("stream")) {
      w.Key("stream");
      w.Bool(opts_.streaming);
    }
    const char* max_key
        = opts_.use_legacy_max_tokens ? "max_tokens" : "max_completion_tokens";
    if (current.max_output_tokens >= 0 && !overridden(max_key)) {
      w.Key(max_key);
      w.Int(current.max_output_tokens);
    }
    if (opts_.streaming && opts_.include_usage
        && !overridden("stream_options")) {
      w.Key("stream_options");
      w.StartObject();
      w.Key("include_usage");
      w.Bool(true);
      w.EndObject();
    }
  }
  for (const auto& [key, value] : extras_) {
    write_string(w, key);
    w.RawValue(value.data(), value.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  return {out.GetString(), out.GetSize()};
}

std::string build_payload(const payload_options& opts, const conversation& conv,
                          std::size_t turn_index,
                          const std::vector<std::string>& assistant_replies) {
  payload_builder builder{opts};
  return std::string{builder.build(conv, turn_index, assistant_replies)};
}

std::string inputs_json(const payload_options& opts, const dataset& data,
                        const std::atomic<bool>* stop) {
  payload_builder builder{opts};
  const std::vector<std::string> no_replies;
  std::string out;
  string_sink sink{&out};
  rapidjson::PrettyWriter<string_sink> w{sink};
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("data");
  w.StartArray();
  for (const auto& conv : data.conversations) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed))
      break;
    w.StartObject();
    w.Key("session_id");
    w.String(conv.session_id.data(),
             static_cast<rapidjson::SizeType>(conv.session_id.size()));
    w.Key("payloads");
    w.StartArray();
    for (std::size_t i = 0; i < conv.turns.size(); ++i) {
      const auto body = builder.build(conv, i, no_replies);
      w.RawValue(body.data(), body.size(), rapidjson::kObjectType);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out.push_back('\n');
  return out;
}

caf::expected<void> write_inputs_json(const std::string& path,
                                      const payload_options& opts,
                                      const dataset& data,
                                      const std::atomic<bool>* stop) {
  auto text = inputs_json(opts, data, stop);
  if (stop != nullptr && stop->load())
    return make_error(
        errc::cancelled,
        "stopped while writing inputs.json; nothing was exported");
  // Like every export: a temp file unique to this writer, fsync, rename,
  // directory fsync, so a reader never sees half a file under the name.
  if (auto done = io::atomic_write_file(path, text); !done)
    return make_error(errc::io, "inputs.json: " + error_message(done.error())
                                  + "; check the artifact directory is writable and has space");
  return caf::unit;
}

} // namespace aiperf::dataset
