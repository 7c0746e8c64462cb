// The DNS wire format (RFC 1035, EDNS0 of RFC 6891, SRV of RFC 2782) as far
// as the cluster DNS server needs it: parse a query defensively, build an
// answer, and — for tests and the simulator's own checks — build a query
// and read an answer back.
//
// A query is parsed from untrusted bytes: every length is checked, name
// compression pointers must point backwards (no loops), names are at most
// 255 octets and labels 63, and the parser never reads past the datagram.
// What is not a query at all (shorter than a header, or a response) is
// dropped; a query whose header is readable but whose body is not is
// answered FORMERR; a non-QUERY opcode NOTIMP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::dns {

namespace type {
inline constexpr std::uint16_t a = 1;
inline constexpr std::uint16_t ns = 2;
inline constexpr std::uint16_t cname = 5;
inline constexpr std::uint16_t soa = 6;
inline constexpr std::uint16_t ptr = 12;
inline constexpr std::uint16_t txt = 16;
inline constexpr std::uint16_t aaaa = 28;
inline constexpr std::uint16_t srv = 33;
inline constexpr std::uint16_t opt = 41;
inline constexpr std::uint16_t ixfr = 251;
inline constexpr std::uint16_t axfr = 252;
inline constexpr std::uint16_t any = 255;
} // namespace type

inline constexpr std::uint16_t class_in = 1;
inline constexpr std::uint16_t class_any = 255;

enum class rcode : std::uint8_t {
  noerror = 0,
  formerr = 1,
  servfail = 2,
  nxdomain = 3,
  notimp = 4,
  refused = 5,
};

/// Header flag bits (the second 16-bit word of the header).
namespace flag {
inline constexpr std::uint16_t qr = 0x8000;
inline constexpr std::uint16_t aa = 0x0400;
inline constexpr std::uint16_t tc = 0x0200;
inline constexpr std::uint16_t rd = 0x0100;
inline constexpr std::uint16_t ra = 0x0080;
} // namespace flag

/// The largest UDP answer without EDNS (RFC 1035 4.2.1), and the most this
/// server sends over UDP whatever a client advertises.
inline constexpr std::size_t classic_udp_limit = 512;
inline constexpr std::size_t max_udp_limit = 4096;
/// The payload size this server advertises in its OPT record.
inline constexpr std::uint16_t advertised_udp_size = 1232;

struct question {
  /// The labels as sent (their case kept, for the echo and the owner names
  /// of the answers); empty = the root.
  std::vector<std::string> labels;
  std::uint16_t qtype = 0;
  std::uint16_t qclass = 0;

  /// The labels joined by dots, no trailing dot ("" = the root).
  [[nodiscard]] std::string name() const;
};

struct query {
  std::uint16_t id = 0;
  std::uint16_t flags = 0; // as sent
  question q;
  bool edns = false;
  std::uint16_t udp_size = 0; // the OPT record's class, when edns

  /// What an answer may take over UDP: 512 without EDNS, else the
  /// advertised size clamped to [512, 4096].
  [[nodiscard]] std::size_t udp_limit() const;
};

enum class parse_outcome : std::uint8_t {
  ok,      // `query` is complete
  formerr, // answer FORMERR with `query.id` / flags
  notimp,  // answer NOTIMP (an opcode other than QUERY)
  drop,    // not a query: send nothing
};

struct parse_result {
  parse_outcome outcome = parse_outcome::drop;
  query value; // id and flags are set for formerr and notimp too
};

[[nodiscard]] parse_result parse_query(const std::uint8_t* data,
                                       std::size_t size);

/// One resource record; `rdata` is already in wire form (names in it are
/// written uncompressed, which RFC 2782 requires for SRV targets).
struct record {
  std::string name; // owner, dotted, no trailing dot
  std::uint16_t rtype = 0;
  std::uint16_t rclass = class_in;
  std::uint32_t ttl = 0;
  std::vector<std::uint8_t> rdata;
};

/// nullopt for a string that is not a dotted-quad IPv4 address.
[[nodiscard]] std::optional<record>
a_record(const std::string& name, const std::string& ipv4, std::uint32_t ttl);
[[nodiscard]] record srv_record(const std::string& name, std::uint32_t ttl,
                                std::uint16_t priority, std::uint16_t weight,
                                std::uint16_t port, const std::string& target);
[[nodiscard]] record name_record(const std::string& name, std::uint16_t rtype,
                                 std::uint32_t ttl,
                                 const std::string& target); // CNAME, PTR, NS
[[nodiscard]] record soa_record(const std::string& zone, std::uint32_t ttl,
                                const std::string& mname,
                                const std::string& rname, std::uint32_t serial,
                                std::uint32_t refresh, std::uint32_t retry,
                                std::uint32_t expire, std::uint32_t minimum);

struct answer {
  rcode code = rcode::noerror;
  bool authoritative = true;
  std::vector<record> answers;
  std::vector<record> authority;
  std::vector<record> additional;
};

/// The response to `q`: its id, RD echoed, QR set, the question echoed,
/// the sections, and an OPT record when the query had one. When it would
/// exceed `limit` octets, the sections are dropped and TC is set (the
/// client retries over TCP).
[[nodiscard]] std::vector<std::uint8_t>
encode_response(const query& q, const answer& a, std::size_t limit);

/// A header-only answer (FORMERR, NOTIMP) to a query whose body could not
/// be used.
[[nodiscard]] std::vector<std::uint8_t> encode_error(const query& q,
                                                     rcode code);

// --- The client side (tests, checks) ---

/// A query for `name` (dotted) of `qtype`, with RD set; with `edns_size`,
/// an OPT record advertising it.
[[nodiscard]] std::vector<std::uint8_t>
encode_query(std::uint16_t id, const std::string& name, std::uint16_t qtype,
             std::optional<std::uint16_t> edns_size = std::nullopt);

struct decoded_record {
  std::string name;
  std::uint16_t rtype = 0;
  std::uint16_t rclass = 0;
  std::uint32_t ttl = 0;
  std::vector<std::uint8_t> rdata;
  /// A: the dotted address; CNAME/PTR/NS: the target; SRV: "prio weight
  /// port target"; SOA: "mname rname serial refresh retry expire minimum".
  std::string text;
};

struct decoded_message {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  [[nodiscard]] rcode code() const { return static_cast<rcode>(flags & 0xF); }
  std::vector<question> questions;
  std::vector<decoded_record> answers;
  std::vector<decoded_record> authority;
  std::vector<decoded_record> additional;
};

/// Reads a whole message (compression allowed anywhere); nullopt when it
/// is malformed.
[[nodiscard]] std::optional<decoded_message>
decode_message(const std::uint8_t* data, std::size_t size);

} // namespace aiperf::k8s::sim::dns
