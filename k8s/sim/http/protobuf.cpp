#include "k8s/sim/http/protobuf.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/object/time.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::http {

namespace {

enum class kind : std::uint8_t {
  string,
  bytes,
  int64,
  int32,
  boolean,
  message,
  time,
  string_map,
  bytes_map
};

struct message_desc;

struct field {
  std::uint32_t number;
  const char* name;
  kind type;
  bool repeated = false;
  const message_desc* sub = nullptr;
};

struct message_desc {
  std::vector<field> fields;
};

// Field numbers from k8s.io/apimachinery pkg/apis/meta/v1/generated.proto
// and k8s.io/api {core,rbac,authorization,authentication}/v1/generated.proto.
const message_desc owner_reference{{{5, "apiVersion", kind::string},
                                    {1, "kind", kind::string},
                                    {3, "name", kind::string},
                                    {4, "uid", kind::string},
                                    {6, "controller", kind::boolean},
                                    {7, "blockOwnerDeletion", kind::boolean}}};

const message_desc object_meta{
    {{1, "name", kind::string},
     {2, "generateName", kind::string},
     {3, "namespace", kind::string},
     {5, "uid", kind::string},
     {6, "resourceVersion", kind::string},
     {7, "generation", kind::int64},
     {8, "creationTimestamp", kind::time},
     {9, "deletionTimestamp", kind::time},
     {10, "deletionGracePeriodSeconds", kind::int64},
     {11, "labels", kind::string_map},
     {12, "annotations", kind::string_map},
     {13, "ownerReferences", kind::message, true, &owner_reference},
     {14, "finalizers", kind::string, true}}};

const message_desc config_map{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "data", kind::string_map},
     {3, "binaryData", kind::bytes_map},
     {4, "immutable", kind::boolean}}};

const message_desc secret{{{1, "metadata", kind::message, false, &object_meta},
                           {2, "data", kind::bytes_map},
                           {3, "type", kind::string},
                           {4, "stringData", kind::string_map},
                           {5, "immutable", kind::boolean}}};

const message_desc namespace_spec{{{1, "finalizers", kind::string, true}}};
const message_desc namespace_obj{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "spec", kind::message, false, &namespace_spec}}};

const message_desc object_reference{{{1, "kind", kind::string},
                                     {2, "namespace", kind::string},
                                     {3, "name", kind::string},
                                     {4, "uid", kind::string},
                                     {5, "apiVersion", kind::string}}};
const message_desc local_object_reference{{{1, "name", kind::string}}};
const message_desc service_account{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "secrets", kind::message, true, &object_reference},
     {3, "imagePullSecrets", kind::message, true, &local_object_reference},
     {4, "automountServiceAccountToken", kind::boolean}}};

const message_desc policy_rule{{{1, "verbs", kind::string, true},
                                {2, "apiGroups", kind::string, true},
                                {3, "resources", kind::string, true},
                                {4, "resourceNames", kind::string, true},
                                {5, "nonResourceURLs", kind::string, true}}};
const message_desc label_selector_requirement{
    {{1, "key", kind::string},
     {2, "operator", kind::string},
     {3, "values", kind::string, true}}};
const message_desc label_selector{{{1, "matchLabels", kind::string_map},
                                   {2, "matchExpressions", kind::message, true,
                                    &label_selector_requirement}}};
const message_desc aggregation_rule{
    {{1, "clusterRoleSelectors", kind::message, true, &label_selector}}};
const message_desc role{{{1, "metadata", kind::message, false, &object_meta},
                         {2, "rules", kind::message, true, &policy_rule}}};
const message_desc cluster_role{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "rules", kind::message, true, &policy_rule},
     {3, "aggregationRule", kind::message, false, &aggregation_rule}}};
const message_desc subject{{{1, "kind", kind::string},
                            {2, "apiGroup", kind::string},
                            {3, "name", kind::string},
                            {4, "namespace", kind::string}}};
const message_desc role_ref{{{1, "apiGroup", kind::string},
                             {2, "kind", kind::string},
                             {3, "name", kind::string}}};
const message_desc role_binding{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "subjects", kind::message, true, &subject},
     {3, "roleRef", kind::message, false, &role_ref}}};

const message_desc resource_attributes{{{1, "namespace", kind::string},
                                        {2, "verb", kind::string},
                                        {3, "group", kind::string},
                                        {4, "version", kind::string},
                                        {5, "resource", kind::string},
                                        {6, "subresource", kind::string},
                                        {7, "name", kind::string}}};
const message_desc non_resource_attributes{
    {{1, "path", kind::string}, {2, "verb", kind::string}}};
const message_desc ssar_spec{
    {{1, "resourceAttributes", kind::message, false, &resource_attributes},
     {2, "nonResourceAttributes", kind::message, false,
      &non_resource_attributes}}};
const message_desc ssar{{{1, "metadata", kind::message, false, &object_meta},
                         {2, "spec", kind::message, false, &ssar_spec}}};
const message_desc ssrr_spec{{{1, "namespace", kind::string}}};
const message_desc ssrr{{{1, "metadata", kind::message, false, &object_meta},
                         {2, "spec", kind::message, false, &ssrr_spec}}};

const message_desc bound_object_reference{{{1, "kind", kind::string},
                                           {2, "apiVersion", kind::string},
                                           {3, "name", kind::string},
                                           {4, "uid", kind::string}}};
const message_desc token_request_spec{
    {{1, "audiences", kind::string, true},
     {4, "expirationSeconds", kind::int64},
     {3, "boundObjectRef", kind::message, false, &bound_object_reference}}};
const message_desc token_request{
    {{1, "metadata", kind::message, false, &object_meta},
     {2, "spec", kind::message, false, &token_request_spec}}};

const message_desc* desc_of(const std::string& api_version,
                            const std::string& kind_name) {
  static const std::map<std::pair<std::string, std::string>,
                        const message_desc*>
      table{
          {{"v1", "ConfigMap"}, &config_map},
          {{"v1", "Secret"}, &secret},
          {{"v1", "Namespace"}, &namespace_obj},
          {{"v1", "ServiceAccount"}, &service_account},
          {{"rbac.authorization.k8s.io/v1", "Role"}, &role},
          {{"rbac.authorization.k8s.io/v1", "ClusterRole"}, &cluster_role},
          {{"rbac.authorization.k8s.io/v1", "RoleBinding"}, &role_binding},
          {{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"},
           &role_binding},
          {{"authorization.k8s.io/v1", "SelfSubjectAccessReview"}, &ssar},
          {{"authorization.k8s.io/v1", "SelfSubjectRulesReview"}, &ssrr},
          {{"authentication.k8s.io/v1", "TokenRequest"}, &token_request},
      };
  auto it = table.find({api_version, kind_name});
  return it == table.end() ? nullptr : it->second;
}

caf::error bad_body(const std::string& why) {
  return make_status_error(
      "decode protobuf body",
      status{"BadRequest",
             400,
             "the body of the request could not be decoded as a "
             "Kubernetes protobuf message: "
                 + why,
             {}});
}

/// One protobuf field read off the wire.
struct wire_field {
  std::uint32_t number = 0;
  std::uint32_t wire_type = 0;
  std::uint64_t varint = 0;
  std::string_view bytes;
};

class reader {
public:
  explicit reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  std::optional<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size())
        return std::nullopt;
      auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        return v;
    }
    return std::nullopt;
  }

  std::optional<wire_field> next() {
    auto key = varint();
    if (!key)
      return std::nullopt;
    wire_field f;
    f.number = static_cast<std::uint32_t>(*key >> 3);
    f.wire_type = static_cast<std::uint32_t>(*key & 7);
    switch (f.wire_type) {
    case 0: {
      auto v = varint();
      if (!v)
        return std::nullopt;
      f.varint = *v;
      return f;
    }
    case 1:
    case 5: {
      std::size_t n = f.wire_type == 1 ? 8 : 4;
      if (data_.size() - pos_ < n)
        return std::nullopt;
      f.bytes = data_.substr(pos_, n);
      pos_ += n;
      return f;
    }
    case 2: {
      auto len = varint();
      if (!len || *len > data_.size() - pos_)
        return std::nullopt;
      f.bytes = data_.substr(pos_, static_cast<std::size_t>(*len));
      pos_ += static_cast<std::size_t>(*len);
      return f;
    }
    default:
      return std::nullopt;
    }
  }

private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

std::string base64(std::string_view data) {
  static constexpr char alphabet[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    auto n = (static_cast<unsigned char>(data[i]) << 16)
             | (static_cast<unsigned char>(data[i + 1]) << 8)
             | static_cast<unsigned char>(data[i + 2]);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  if (i + 1 == data.size()) {
    auto n = static_cast<unsigned char>(data[i]) << 16;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    auto n = (static_cast<unsigned char>(data[i]) << 16)
             | (static_cast<unsigned char>(data[i + 1]) << 8);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

caf::expected<json> decode_message(std::string_view data,
                                   const message_desc& desc, int depth);

caf::expected<json> decode_value(const wire_field& wf, const field& f,
                                 int depth) {
  switch (f.type) {
  case kind::string:
    if (wf.wire_type != 2)
      break;
    return json(std::string{wf.bytes});
  case kind::bytes:
    if (wf.wire_type != 2)
      break;
    return json(base64(wf.bytes));
  case kind::int64:
    if (wf.wire_type != 0)
      break;
    return json(static_cast<std::int64_t>(wf.varint));
  case kind::int32:
    if (wf.wire_type != 0)
      break;
    return json(static_cast<std::int32_t>(wf.varint));
  case kind::boolean:
    if (wf.wire_type != 0)
      break;
    return json(wf.varint != 0);
  case kind::message:
    if (wf.wire_type != 2)
      break;
    return decode_message(wf.bytes, *f.sub, depth + 1);
  case kind::time: {
    if (wf.wire_type != 2)
      break;
    reader r{wf.bytes};
    std::int64_t seconds = 0;
    while (!r.done()) {
      auto t = r.next();
      if (!t)
        return bad_body(std::string{"field "} + f.name + " is cut short");
      if (t->number == 1 && t->wire_type == 0)
        seconds = static_cast<std::int64_t>(t->varint);
    }
    return json(format_time(seconds));
  }
  default:
    break;
  }
  return bad_body(std::string{"field "} + f.name + " has the wrong wire type");
}

caf::expected<json> decode_message(std::string_view data,
                                   const message_desc& desc, int depth) {
  if (depth > 16)
    return bad_body("messages nest too deeply");
  json out = json::object();
  reader r{data};
  while (!r.done()) {
    auto wf = r.next();
    if (!wf)
      return bad_body("a field is cut short or has an unknown wire type");
    const field* f = nullptr;
    for (const auto& candidate : desc.fields)
      if (candidate.number == wf->number)
        f = &candidate;
    if (f == nullptr)
      continue; // a field we do not model; proto readers skip unknown fields
    if (f->type == kind::string_map || f->type == kind::bytes_map) {
      if (wf->wire_type != 2)
        return bad_body(std::string{"field "} + f->name
                        + " has the wrong wire type");
      reader entry{wf->bytes};
      std::string key, value;
      while (!entry.done()) {
        auto e = entry.next();
        if (!e || e->wire_type != 2)
          return bad_body(std::string{"an entry of "} + f->name
                          + " is malformed");
        if (e->number == 1)
          key = std::string{e->bytes};
        else if (e->number == 2)
          value = f->type == kind::bytes_map ? base64(e->bytes)
                                             : std::string{e->bytes};
      }
      if (!out.contains(f->name))
        out[f->name] = json::object();
      out[f->name][key] = value;
      continue;
    }
    auto value = decode_value(*wf, *f, depth);
    if (!value)
      return value.error();
    if (f->repeated) {
      if (!out.contains(f->name))
        out[f->name] = json::array();
      out[f->name].push_back(std::move(*value));
    } else {
      out[f->name] = std::move(*value);
    }
  }
  return out;
}

} // namespace

caf::expected<json> decode_protobuf_object(std::string_view body) {
  static constexpr std::string_view magic{"k8s\0", 4};
  if (body.substr(0, 4) != magic)
    return bad_body("it does not start with the magic bytes \"k8s\\x00\"");
  reader r{body.substr(4)};
  std::string api_version, kind_name;
  std::string_view raw;
  bool has_raw = false;
  while (!r.done()) {
    auto wf = r.next();
    if (!wf)
      return bad_body("the runtime.Unknown envelope is malformed");
    if (wf->number == 1 && wf->wire_type == 2) {
      reader tm{wf->bytes};
      while (!tm.done()) {
        auto t = tm.next();
        if (!t || t->wire_type != 2)
          return bad_body("the envelope's typeMeta is malformed");
        if (t->number == 1)
          api_version = std::string{t->bytes};
        else if (t->number == 2)
          kind_name = std::string{t->bytes};
      }
    } else if (wf->number == 2 && wf->wire_type == 2) {
      raw = wf->bytes;
      has_raw = true;
    }
  }
  if (!has_raw || kind_name.empty())
    return bad_body("the envelope names no kind or carries no object");
  const message_desc* desc = desc_of(api_version, kind_name);
  if (desc == nullptr)
    return make_status_error(
        "decode protobuf body",
        status{"UnsupportedMediaType",
               415,
               "the simulator cannot decode " + kind_name + " (" + api_version
                   + ") from application/vnd.kubernetes.protobuf; send it as "
                     "application/json",
               {}});
  auto object = decode_message(raw, *desc, 0);
  if (!object)
    return object.error();
  json out = json::object();
  out["kind"] = kind_name;
  out["apiVersion"] = api_version;
  for (auto& [k, v] : object->items())
    out[k] = std::move(v);
  return out;
}

} // namespace aiperf::k8s::sim::http
