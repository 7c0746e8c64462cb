#include "k8s/sim/dns/codec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace aiperf::k8s::sim::dns {

namespace {

constexpr std::size_t header_size = 12;
constexpr std::size_t max_name = 255;
constexpr std::size_t max_label = 63;
constexpr int max_pointers = 64;

std::uint16_t read16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t read32(const std::uint8_t* p) {
  return (static_cast<std::uint32_t>(p[0]) << 24)
         | (static_cast<std::uint32_t>(p[1]) << 16)
         | (static_cast<std::uint32_t>(p[2]) << 8) | p[3];
}

void put16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v & 0xFF));
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xFFFF));
}

void set16(std::vector<std::uint8_t>& out, std::size_t at, std::uint16_t v) {
  out[at] = static_cast<std::uint8_t>(v >> 8);
  out[at + 1] = static_cast<std::uint8_t>(v & 0xFF);
}

// Reads the name at `pos` into `labels`; `pos` ends after the name as it
// sits there (after the first pointer, if any). False when malformed.
bool read_name(const std::uint8_t* data, std::size_t size, std::size_t& pos,
               std::vector<std::string>& labels) {
  labels.clear();
  std::size_t at = pos;
  std::size_t total = 1; // the root's length octet
  bool jumped = false;
  int pointers = 0;
  while (true) {
    if (at >= size)
      return false;
    std::uint8_t len = data[at];
    if ((len & 0xC0) == 0xC0) {
      if (at + 1 >= size || ++pointers > max_pointers)
        return false;
      std::size_t target
          = static_cast<std::size_t>((len & 0x3F) << 8) | data[at + 1];
      // Only backwards: a pointer to itself or ahead could loop.
      if (target >= at)
        return false;
      if (!jumped)
        pos = at + 2;
      jumped = true;
      at = target;
      continue;
    }
    if ((len & 0xC0) != 0)
      return false; // extended label types (RFC 6891 6.2) are not used
    if (len == 0) {
      if (!jumped)
        pos = at + 1;
      return true;
    }
    if (len > max_label || at + 1 + len > size)
      return false;
    total += len + 1;
    if (total > max_name)
      return false;
    labels.emplace_back(reinterpret_cast<const char*>(data + at + 1), len);
    at += 1 + len;
  }
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < name.size()) {
    auto dot = name.find('.', start);
    if (dot == std::string::npos)
      dot = name.size();
    if (dot > start)
      out.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

void put_labels_plain(std::vector<std::uint8_t>& out,
                      const std::vector<std::string>& labels) {
  for (const auto& l : labels) {
    if (l.empty())
      continue; // a zero length would end the name
    auto n = std::min(l.size(), max_label);
    out.push_back(static_cast<std::uint8_t>(n));
    out.insert(out.end(), l.begin(), l.begin() + static_cast<long>(n));
  }
  out.push_back(0);
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Writes owner names with compression (RFC 1035 4.1.4): each suffix
// written once is pointed to afterwards. Case-insensitive, as the
// comparison of names is.
class name_writer {
public:
  void write(std::vector<std::uint8_t>& out,
             const std::vector<std::string>& labels) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i].empty())
        continue; // a zero length would end the name
      auto key = suffix_key(labels, i);
      auto it = offsets_.find(key);
      if (it != offsets_.end()) {
        put16(out, static_cast<std::uint16_t>(0xC000 | it->second));
        return;
      }
      if (out.size() < 0x3FFF)
        offsets_[key] = out.size();
      auto n = std::min(labels[i].size(), max_label);
      out.push_back(static_cast<std::uint8_t>(n));
      out.insert(out.end(), labels[i].begin(),
                 labels[i].begin() + static_cast<long>(n));
    }
    out.push_back(0);
  }

private:
  static std::string suffix_key(const std::vector<std::string>& labels,
                                std::size_t from) {
    std::string key;
    for (std::size_t i = from; i < labels.size(); ++i)
      key += lower(labels[i]) + '\0';
    return key;
  }
  std::map<std::string, std::size_t> offsets_;
};

void put_record(std::vector<std::uint8_t>& out, name_writer& names,
                const record& r) {
  names.write(out, split(r.name));
  put16(out, r.rtype);
  put16(out, r.rclass);
  put32(out, r.ttl);
  put16(out, static_cast<std::uint16_t>(r.rdata.size()));
  out.insert(out.end(), r.rdata.begin(), r.rdata.end());
}

void put_opt(std::vector<std::uint8_t>& out) {
  out.push_back(0); // the root
  put16(out, type::opt);
  put16(out, advertised_udp_size);
  put32(out, 0); // extended rcode 0, version 0, no flags
  put16(out, 0);
}

std::vector<std::uint8_t> header(const query& q, std::uint16_t flags) {
  std::vector<std::uint8_t> out;
  out.reserve(512);
  put16(out, q.id);
  put16(out, flags);
  put16(out, 0); // counts, filled in later
  put16(out, 0);
  put16(out, 0);
  put16(out, 0);
  return out;
}

std::vector<std::uint8_t> build(const query& q, const answer& a,
                                bool truncated) {
  std::uint16_t flags
      = flag::qr | (q.flags & flag::rd) | static_cast<std::uint16_t>(a.code);
  if (a.authoritative)
    flags |= flag::aa;
  if (truncated)
    flags |= flag::tc;
  auto out = header(q, flags);
  name_writer names;
  names.write(out, q.q.labels);
  put16(out, q.q.qtype);
  put16(out, q.q.qclass);
  std::size_t an = 0, ns = 0, ar = 0;
  if (!truncated) {
    for (const auto& r : a.answers)
      put_record(out, names, r);
    for (const auto& r : a.authority)
      put_record(out, names, r);
    for (const auto& r : a.additional)
      put_record(out, names, r);
    an = a.answers.size();
    ns = a.authority.size();
    ar = a.additional.size();
  }
  if (q.edns) {
    put_opt(out);
    ++ar;
  }
  set16(out, 4, 1);
  set16(out, 6, static_cast<std::uint16_t>(an));
  set16(out, 8, static_cast<std::uint16_t>(ns));
  set16(out, 10, static_cast<std::uint16_t>(ar));
  return out;
}

// Skips one resource record at `pos`; false when it runs past the end.
// `opt` is set for an OPT record (root owner, type 41).
bool skip_record(const std::uint8_t* data, std::size_t size, std::size_t& pos,
                 std::uint16_t& rtype, std::uint16_t& rclass, bool& root) {
  std::vector<std::string> labels;
  if (!read_name(data, size, pos, labels))
    return false;
  if (pos + 10 > size)
    return false;
  rtype = read16(data + pos);
  rclass = read16(data + pos + 2);
  std::uint16_t rdlen = read16(data + pos + 8);
  pos += 10;
  if (pos + rdlen > size)
    return false;
  pos += rdlen;
  root = labels.empty();
  return true;
}

} // namespace

std::string question::name() const {
  std::string out;
  for (const auto& l : labels) {
    if (!out.empty())
      out += '.';
    out += l;
  }
  return out;
}

std::size_t query::udp_limit() const {
  if (!edns)
    return classic_udp_limit;
  return std::clamp<std::size_t>(udp_size, classic_udp_limit, max_udp_limit);
}

parse_result parse_query(const std::uint8_t* data, std::size_t size) {
  parse_result r;
  if (data == nullptr || size < header_size)
    return r; // drop: not even a header
  r.value.id = read16(data);
  r.value.flags = read16(data + 2);
  if (r.value.flags & flag::qr)
    return r; // a response: never answer one (no loops between servers)
  auto opcode = (r.value.flags >> 11) & 0xF;
  if (opcode != 0) {
    r.outcome = parse_outcome::notimp;
    return r;
  }
  r.outcome = parse_outcome::formerr;
  auto qd = read16(data + 4);
  auto an = read16(data + 6);
  auto ns = read16(data + 8);
  auto ar = read16(data + 10);
  if (qd != 1)
    return r;
  std::size_t pos = header_size;
  if (!read_name(data, size, pos, r.value.q.labels))
    return r;
  if (pos + 4 > size)
    return r;
  r.value.q.qtype = read16(data + pos);
  r.value.q.qclass = read16(data + pos + 2);
  pos += 4;
  std::uint32_t records = std::uint32_t{an} + ns + ar;
  for (std::uint32_t i = 0; i < records; ++i) {
    std::uint16_t rtype = 0, rclass = 0;
    bool root = false;
    if (!skip_record(data, size, pos, rtype, rclass, root))
      return r;
    if (i >= std::uint32_t{an} + ns && rtype == type::opt) {
      if (!root || r.value.edns)
        return r; // RFC 6891 6.1.1: one OPT, owned by the root
      r.value.edns = true;
      r.value.udp_size = rclass;
    }
  }
  r.outcome = parse_outcome::ok;
  return r;
}

std::optional<record> a_record(const std::string& name, const std::string& ipv4,
                               std::uint32_t ttl) {
  unsigned b[4];
  char tail = 0;
  if (std::sscanf(ipv4.c_str(), "%3u.%3u.%3u.%3u%c", &b[0], &b[1], &b[2], &b[3],
                  &tail)
      != 4)
    return std::nullopt;
  record r{name, type::a, class_in, ttl, {}};
  for (auto v : b) {
    if (v > 255)
      return std::nullopt;
    r.rdata.push_back(static_cast<std::uint8_t>(v));
  }
  return r;
}

record srv_record(const std::string& name, std::uint32_t ttl,
                  std::uint16_t priority, std::uint16_t weight,
                  std::uint16_t port, const std::string& target) {
  record r{name, type::srv, class_in, ttl, {}};
  put16(r.rdata, priority);
  put16(r.rdata, weight);
  put16(r.rdata, port);
  put_labels_plain(r.rdata, split(target));
  return r;
}

record name_record(const std::string& name, std::uint16_t rtype,
                   std::uint32_t ttl, const std::string& target) {
  record r{name, rtype, class_in, ttl, {}};
  put_labels_plain(r.rdata, split(target));
  return r;
}

record soa_record(const std::string& zone, std::uint32_t ttl,
                  const std::string& mname, const std::string& rname,
                  std::uint32_t serial, std::uint32_t refresh,
                  std::uint32_t retry, std::uint32_t expire,
                  std::uint32_t minimum) {
  record r{zone, type::soa, class_in, ttl, {}};
  put_labels_plain(r.rdata, split(mname));
  put_labels_plain(r.rdata, split(rname));
  for (auto v : {serial, refresh, retry, expire, minimum})
    put32(r.rdata, v);
  return r;
}

std::vector<std::uint8_t> encode_response(const query& q, const answer& a,
                                          std::size_t limit) {
  auto out = build(q, a, false);
  if (out.size() <= limit)
    return out;
  return build(q, a, true);
}

std::vector<std::uint8_t> encode_error(const query& q, rcode code) {
  std::uint16_t flags = flag::qr | (q.flags & flag::rd)
                        | (q.flags & 0x7800) // the opcode, echoed
                        | static_cast<std::uint16_t>(code);
  return header(q, flags);
}

std::vector<std::uint8_t> encode_query(std::uint16_t id,
                                       const std::string& name,
                                       std::uint16_t qtype,
                                       std::optional<std::uint16_t> edns_size) {
  std::vector<std::uint8_t> out;
  put16(out, id);
  put16(out, flag::rd);
  put16(out, 1);
  put16(out, 0);
  put16(out, 0);
  put16(out, edns_size ? 1 : 0);
  put_labels_plain(out, split(name));
  put16(out, qtype);
  put16(out, class_in);
  if (edns_size) {
    out.push_back(0);
    put16(out, type::opt);
    put16(out, *edns_size);
    put32(out, 0);
    put16(out, 0);
  }
  return out;
}

namespace {

std::string join(const std::vector<std::string>& labels) {
  question q;
  q.labels = labels;
  return q.name();
}

bool read_records(const std::uint8_t* data, std::size_t size, std::size_t& pos,
                  std::size_t count, std::vector<decoded_record>& out) {
  for (std::size_t i = 0; i < count; ++i) {
    decoded_record r;
    std::vector<std::string> labels;
    if (!read_name(data, size, pos, labels) || pos + 10 > size)
      return false;
    r.name = join(labels);
    r.rtype = read16(data + pos);
    r.rclass = read16(data + pos + 2);
    r.ttl = read32(data + pos + 4);
    std::size_t rdlen = read16(data + pos + 8);
    pos += 10;
    if (pos + rdlen > size)
      return false;
    r.rdata.assign(data + pos, data + pos + rdlen);
    std::size_t at = pos;
    auto name_at = [&](std::size_t& p) -> std::optional<std::string> {
      std::vector<std::string> l;
      if (!read_name(data, size, p, l) || p > pos + rdlen)
        return std::nullopt;
      return join(l);
    };
    if (r.rtype == type::a && rdlen == 4) {
      for (int k = 0; k < 4; ++k) {
        if (k > 0)
          r.text += '.';
        r.text += std::to_string(data[at + k]);
      }
    } else if (r.rtype == type::cname || r.rtype == type::ptr
               || r.rtype == type::ns) {
      auto n = name_at(at);
      if (!n)
        return false;
      r.text = *n;
    } else if (r.rtype == type::srv && rdlen >= 7) {
      auto prio = read16(data + at);
      auto weight = read16(data + at + 2);
      auto port = read16(data + at + 4);
      at += 6;
      auto n = name_at(at);
      if (!n)
        return false;
      for (auto v : {prio, weight, port}) {
        r.text += std::to_string(v);
        r.text += ' ';
      }
      r.text += *n;
    } else if (r.rtype == type::soa) {
      auto m = name_at(at);
      if (!m)
        return false;
      auto rn = name_at(at);
      if (!rn || at + 20 > pos + rdlen)
        return false;
      r.text = *m;
      r.text += ' ';
      r.text += *rn;
      for (int k = 0; k < 5; ++k) {
        r.text += ' ';
        r.text += std::to_string(read32(data + at + 4 * k));
      }
    }
    pos += rdlen;
    out.push_back(std::move(r));
  }
  return true;
}

} // namespace

std::optional<decoded_message> decode_message(const std::uint8_t* data,
                                              std::size_t size) {
  if (data == nullptr || size < header_size)
    return std::nullopt;
  decoded_message m;
  m.id = read16(data);
  m.flags = read16(data + 2);
  std::size_t qd = read16(data + 4), an = read16(data + 6),
              ns = read16(data + 8), ar = read16(data + 10);
  std::size_t pos = header_size;
  for (std::size_t i = 0; i < qd; ++i) {
    question q;
    if (!read_name(data, size, pos, q.labels) || pos + 4 > size)
      return std::nullopt;
    q.qtype = read16(data + pos);
    q.qclass = read16(data + pos + 2);
    pos += 4;
    m.questions.push_back(std::move(q));
  }
  if (!read_records(data, size, pos, an, m.answers)
      || !read_records(data, size, pos, ns, m.authority)
      || !read_records(data, size, pos, ar, m.additional))
    return std::nullopt;
  return m;
}

} // namespace aiperf::k8s::sim::dns
