#include "actors/benchmark/worker/response_parser.hpp"

#include <rapidjson/document.h>

namespace aiperf::worker {

namespace {

using value = rapidjson::Value;

std::string_view string_member(const value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString())
    return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

std::int64_t int_member(const value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsInt64())
    return -1;
  return it->value.GetInt64();
}

} // namespace

bool response_parser::parse(std::string_view json, proto::endpoint_kind kind,
                            message_fields& out) {
  out = message_fields{};
  // In-situ parsing decodes strings in place: no allocation per string.
  scratch_.assign(json);
  char buffer[4096];
  rapidjson::MemoryPoolAllocator<> pool{buffer, sizeof(buffer)};
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>
    doc{&pool};
  doc.ParseInsitu(scratch_.data());
  if (doc.HasParseError() || !doc.IsObject())
    return false;
  if (auto err = doc.FindMember("error"); err != doc.MemberEnd()) {
    out.is_error = true;
    if (err->value.IsObject())
      out.error_message = string_member(err->value, "message");
    else if (err->value.IsString())
      out.error_message = {err->value.GetString(),
                           err->value.GetStringLength()};
  }
  if (auto usage = doc.FindMember("usage");
      usage != doc.MemberEnd() && usage->value.IsObject()) {
    const auto& u = usage->value;
    out.has_usage = true;
    out.usage.prompt_tokens = int_member(u, "prompt_tokens");
    out.usage.completion_tokens = int_member(u, "completion_tokens");
    out.usage.total_tokens = int_member(u, "total_tokens");
    if (auto d = u.FindMember("completion_tokens_details");
        d != u.MemberEnd() && d->value.IsObject())
      out.usage.reasoning_tokens = int_member(d->value, "reasoning_tokens");
  }
  if (kind == proto::endpoint_kind::embeddings) {
    auto data = doc.FindMember("data");
    out.has_embedding = data != doc.MemberEnd() && data->value.IsArray()
                        && !data->value.Empty();
    return true;
  }
  auto choices = doc.FindMember("choices");
  if (choices == doc.MemberEnd() || !choices->value.IsArray()
      || choices->value.Empty() || !choices->value[0].IsObject())
    return true;
  const auto& choice = choices->value[0];
  if (kind == proto::endpoint_kind::completions) {
    out.content = string_member(choice, "text");
    return true;
  }
  auto msg = choice.FindMember("delta");
  if (msg == choice.MemberEnd())
    msg = choice.FindMember("message");
  if (msg == choice.MemberEnd() || !msg->value.IsObject())
    return true;
  out.content = string_member(msg->value, "content");
  out.reasoning = string_member(msg->value, "reasoning_content");
  if (out.reasoning.empty())
    out.reasoning = string_member(msg->value, "reasoning");
  return true;
}

} // namespace aiperf::worker
