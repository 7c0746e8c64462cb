// The cluster DNS without sockets: the wire codec (query parsing, answers,
// truncation, malformed input) and the zone's lookups (services, pod
// hostnames, SRV, NXDOMAIN, names outside the domain).
#include "k8s/api/json.hpp"
#include "k8s/sim/dns/codec.hpp"
#include "k8s/sim/dns/zone.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::dns {
namespace {

using bytes = std::vector<std::uint8_t>;

parse_result parse(const bytes& b) {
  return parse_query(b.data(), b.size());
}

decoded_message decode(const bytes& b) {
  auto m = decode_message(b.data(), b.size());
  EXPECT_TRUE(m.has_value());
  return m ? *m : decoded_message{};
}

TEST(dns_codec, parses_a_query_and_keeps_the_case_of_its_name) {
  auto q = encode_query(0x1234, "Mock.Bench.svc.cluster.local", type::a);
  auto r = parse(q);
  ASSERT_EQ(r.outcome, parse_outcome::ok);
  EXPECT_EQ(r.value.id, 0x1234);
  EXPECT_EQ(r.value.q.name(), "Mock.Bench.svc.cluster.local");
  EXPECT_EQ(r.value.q.qtype, type::a);
  EXPECT_EQ(r.value.q.qclass, class_in);
  EXPECT_FALSE(r.value.edns);
  EXPECT_EQ(r.value.udp_limit(), 512u);
}

TEST(dns_codec, reads_the_edns_payload_size) {
  auto r = parse(encode_query(7, "a.b", type::a, 4000));
  ASSERT_EQ(r.outcome, parse_outcome::ok);
  EXPECT_TRUE(r.value.edns);
  EXPECT_EQ(r.value.udp_size, 4000);
  EXPECT_EQ(r.value.udp_limit(), 4000u);
  EXPECT_EQ(parse(encode_query(7, "a.b", type::a, 100)).value.udp_limit(),
            512u);
  EXPECT_EQ(parse(encode_query(7, "a.b", type::a, 65000)).value.udp_limit(),
            4096u);
}

TEST(dns_codec, follows_compression_pointers) {
  // The question's name is a pointer to offset 0, where the id reads as the
  // label "a" and the first flags octet (0) ends the name.
  bytes q
      = {0x01, 'a', 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0, 0x00, 0, 1, 0, 1};
  auto r = parse(q);
  ASSERT_EQ(r.outcome, parse_outcome::ok);
  EXPECT_EQ(r.value.q.name(), "a");
  // An additional record whose owner points at the question's name.
  bytes with_extra = encode_query(9, "svc.cluster.local", type::a);
  with_extra[11] = 1;
  for (std::uint8_t b : {0xC0, 0x0C, 0x00, 0x10, 0x00, 0x01, 0, 0, 0, 0, 0, 0})
    with_extra.push_back(b);
  r = parse(with_extra);
  EXPECT_EQ(r.outcome, parse_outcome::ok);
  EXPECT_EQ(r.value.q.name(), "svc.cluster.local");
}

TEST(dns_codec, refuses_pointer_loops_and_forward_pointers) {
  bytes header = {0, 5, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  bytes self_loop = header;
  for (std::uint8_t b : {0xC0, 0x0C, 0, 1, 0, 1})
    self_loop.push_back(b); // a pointer to itself
  auto r = parse(self_loop);
  EXPECT_EQ(r.outcome, parse_outcome::formerr);
  EXPECT_EQ(r.value.id, 5);
  bytes forward = header;
  for (std::uint8_t b : {0xC0, 0x0E, 0x01, 0x61, 0, 0, 1, 0, 1})
    forward.push_back(b);
  EXPECT_EQ(parse(forward).outcome, parse_outcome::formerr);
}

TEST(dns_codec, malformed_input_is_formerr_or_dropped_and_never_overread) {
  EXPECT_EQ(parse({}).outcome, parse_outcome::drop);
  EXPECT_EQ(parse({1, 2, 3}).outcome, parse_outcome::drop);
  // A response is never answered.
  auto resp = encode_query(1, "a.b", type::a);
  resp[2] |= 0x80;
  EXPECT_EQ(parse(resp).outcome, parse_outcome::drop);
  // An opcode other than QUERY.
  auto status = encode_query(1, "a.b", type::a);
  status[2] |= 0x10; // opcode 2 (STATUS)
  EXPECT_EQ(parse(status).outcome, parse_outcome::notimp);
  // No question, two questions.
  bytes none = {0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(parse(none).outcome, parse_outcome::formerr);
  auto two = encode_query(1, "a.b", type::a);
  two[5] = 2;
  EXPECT_EQ(parse(two).outcome, parse_outcome::formerr);
  // A label longer than 63, a name longer than 255.
  bytes long_label = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 64};
  long_label.insert(long_label.end(), 64, 'a');
  for (std::uint8_t b : {0, 0, 1, 0, 1})
    long_label.push_back(b);
  EXPECT_EQ(parse(long_label).outcome, parse_outcome::formerr);
  std::string long_name;
  for (int i = 0; i < 5; ++i)
    long_name += std::string(60, 'x') + ".";
  EXPECT_EQ(parse(encode_query(1, long_name, type::a)).outcome,
            parse_outcome::formerr);
  // Every prefix of a good query is refused without reading past it.
  auto good = encode_query(3, "mock.bench.svc.cluster.local", type::a, 1232);
  for (std::size_t n = 0; n < good.size(); ++n) {
    bytes cut(good.begin(), good.begin() + static_cast<long>(n));
    EXPECT_NE(parse(cut).outcome, parse_outcome::ok) << n;
  }
  // Random bytes: no crash, and anything accepted has one question.
  std::mt19937 rng(42);
  for (int i = 0; i < 20000; ++i) {
    bytes junk(rng() % 80);
    for (auto& b : junk)
      b = static_cast<std::uint8_t>(rng());
    if (junk.size() > 2)
      junk[2] &= 0x07; // a query with opcode 0, mostly
    auto r = parse(junk);
    if (r.outcome == parse_outcome::ok) {
      EXPECT_EQ(junk[5], 1);
    }
  }
}

TEST(dns_codec, formerr_answer_echoes_the_id) {
  bytes none = {0xAB, 0xCD, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto r = parse(none);
  ASSERT_EQ(r.outcome, parse_outcome::formerr);
  auto out = encode_error(r.value, rcode::formerr);
  auto m = decode(out);
  EXPECT_EQ(m.id, 0xABCD);
  EXPECT_EQ(m.code(), rcode::formerr);
  EXPECT_TRUE(m.flags & flag::qr);
  EXPECT_TRUE(m.flags & flag::rd);
}

TEST(dns_codec, builds_an_answer_with_compressed_owner_names) {
  auto r = parse(encode_query(77, "mock.bench.svc.cluster.local", type::a));
  ASSERT_EQ(r.outcome, parse_outcome::ok);
  answer a;
  a.answers.push_back(*a_record("mock.bench.svc.cluster.local", "10.1.0.5", 5));
  a.answers.push_back(*a_record("mock.bench.svc.cluster.local", "10.1.0.6", 5));
  auto out = encode_response(r.value, a, 512);
  auto m = decode(out);
  EXPECT_EQ(m.id, 77);
  EXPECT_EQ(m.code(), rcode::noerror);
  EXPECT_TRUE(m.flags & flag::aa);
  EXPECT_FALSE(m.flags & flag::tc);
  ASSERT_EQ(m.answers.size(), 2u);
  EXPECT_EQ(m.answers[0].text, "10.1.0.5");
  EXPECT_EQ(m.answers[1].text, "10.1.0.6");
  EXPECT_EQ(m.answers[0].ttl, 5u);
  EXPECT_EQ(m.answers[0].name, "mock.bench.svc.cluster.local");
  // Each owner name is a two-octet pointer to the question.
  std::size_t question_end = 12 + 30 + 4;
  EXPECT_EQ(out.size(), question_end + 2 * (2 + 10 + 4));
}

TEST(dns_codec, sets_tc_above_512_octets_without_edns) {
  auto q = parse(encode_query(5, "big.bench.svc.cluster.local", type::a));
  answer a;
  for (int i = 0; i < 40; ++i)
    a.answers.push_back(*a_record("big.bench.svc.cluster.local",
                                  "10.1.0." + std::to_string(i + 1), 5));
  auto udp = decode(encode_response(q.value, a, q.value.udp_limit()));
  EXPECT_TRUE(udp.flags & flag::tc);
  EXPECT_TRUE(udp.answers.empty());
  ASSERT_EQ(udp.questions.size(), 1u);
  auto tcp = decode(encode_response(q.value, a, 65535));
  EXPECT_FALSE(tcp.flags & flag::tc);
  EXPECT_EQ(tcp.answers.size(), 40u);
  // With EDNS 1232 the same answer fits, and the OPT record comes back.
  auto e = parse(encode_query(5, "big.bench.svc.cluster.local", type::a, 1232));
  auto edns = decode(encode_response(e.value, a, e.value.udp_limit()));
  EXPECT_FALSE(edns.flags & flag::tc);
  EXPECT_EQ(edns.answers.size(), 40u);
  ASSERT_EQ(edns.additional.size(), 1u);
  EXPECT_EQ(edns.additional[0].rtype, type::opt);
}

// --- the zone ---

json service(const std::string& ns, const std::string& name, bool headless,
             json ports = json::array()) {
  json spec = {{"type", "ClusterIP"}, {"ports", ports}};
  if (headless)
    spec["clusterIP"] = "None";
  return {{"metadata", {{"name", name}, {"namespace", ns}}}, {"spec", spec}};
}

json slice(const std::string& ns, const std::string& svc, json endpoints,
           json ports = json::array()) {
  return {{"metadata",
           {{"name", svc + "-abcde"},
            {"namespace", ns},
            {"labels", {{"kubernetes.io/service-name", svc}}}}},
          {"addressType", "IPv4"},
          {"endpoints", endpoints},
          {"ports", ports}};
}

json endpoint(const std::string& ip, bool ready,
              const std::string& hostname = "") {
  json e
      = {{"addresses", json::array({ip})}, {"conditions", {{"ready", ready}}}};
  if (!hostname.empty())
    e["hostname"] = hostname;
  return e;
}

struct zone_test : ::testing::Test {
  zone z;
  zone_test() {
    std::map<std::string, json> services;
    std::map<std::string, json> slices;
    json port = json::array(
        {{{"name", "http"}, {"protocol", "TCP"}, {"port", 8000}}});
    services["bench/mock"] = service("bench", "mock", false, port);
    services["bench/run"] = service("bench", "run", true, port);
    services["bench/empty"] = service("bench", "empty", true);
    auto ext = service("bench", "ext", false);
    ext["spec"]["type"] = "ExternalName";
    ext["spec"]["externalName"] = "db.example.com";
    services["bench/ext"] = ext;
    slices["bench/mock-1"] = slice(
        "bench", "mock",
        json::array({endpoint("10.1.0.5", true), endpoint("10.1.0.6", false)}),
        port);
    slices["bench/run-1"]
        = slice("bench", "run",
                json::array({endpoint("10.1.0.7", true, "run-w-0-0"),
                             endpoint("10.1.0.8", true, "run-w-0-1")}),
                port);
    zone_config cfg;
    cfg.api_server = "10.1.0.1";
    z = build_zone(cfg, services, slices, 42);
  }

  answer ask(const std::string& name, std::uint16_t t = type::a) {
    auto r = parse_query(encode_query(1, name, t).data(),
                         encode_query(1, name, t).size());
    EXPECT_EQ(r.outcome, parse_outcome::ok);
    return lookup(z, r.value.q);
  }

  static std::vector<std::string> texts(const answer& a) {
    std::vector<std::string> out;
    query q;
    q.q.labels = {"x"};
    q.q.qtype = type::a;
    q.q.qclass = class_in;
    auto bytes = encode_response(q, a, 65535);
    auto m = decode_message(bytes.data(), bytes.size());
    if (m)
      for (const auto& r : m->answers)
        out.push_back(r.text);
    return out;
  }
};

TEST_F(zone_test, a_cluster_ip_service_answers_its_ready_endpoints) {
  auto a = ask("mock.bench.svc.cluster.local");
  EXPECT_EQ(a.code, rcode::noerror);
  EXPECT_TRUE(a.authoritative);
  EXPECT_EQ(texts(a), std::vector<std::string>{"10.1.0.5"});
  EXPECT_EQ(a.answers[0].ttl, 5u);
  EXPECT_EQ(texts(ask("MOCK.bench.SVC.cluster.local")),
            std::vector<std::string>{"10.1.0.5"});
}

TEST_F(zone_test, a_headless_service_answers_every_ready_pod) {
  EXPECT_EQ(texts(ask("run.bench.svc.cluster.local")),
            (std::vector<std::string>{"10.1.0.7", "10.1.0.8"}));
  // Without endpoints a headless Service has no name at all.
  EXPECT_EQ(ask("empty.bench.svc.cluster.local").code, rcode::nxdomain);
}

TEST_F(zone_test, pod_hostnames_resolve_under_their_subdomain) {
  EXPECT_EQ(texts(ask("run-w-0-1.run.bench.svc.cluster.local")),
            std::vector<std::string>{"10.1.0.8"});
  EXPECT_EQ(texts(ask("10-1-0-5.mock.bench.svc.cluster.local")),
            std::vector<std::string>{"10.1.0.5"});
  EXPECT_EQ(ask("run-w-9-9.run.bench.svc.cluster.local").code, rcode::nxdomain);
}

TEST_F(zone_test, srv_for_named_ports) {
  auto a = ask("_http._tcp.run.bench.svc.cluster.local", type::srv);
  EXPECT_EQ(texts(a), (std::vector<std::string>{
                          "0 50 8000 run-w-0-0.run.bench.svc.cluster.local",
                          "0 50 8000 run-w-0-1.run.bench.svc.cluster.local"}));
  EXPECT_EQ(a.additional.size(), 2u);
  EXPECT_EQ(
      texts(ask("_http._tcp.mock.bench.svc.cluster.local", type::srv)),
      std::vector<std::string>{"0 100 8000 mock.bench.svc.cluster.local"});
  EXPECT_EQ(ask("_grpc._tcp.mock.bench.svc.cluster.local", type::srv).code,
            rcode::nxdomain);
}

TEST_F(zone_test, the_api_server_and_pod_names) {
  EXPECT_EQ(texts(ask("kubernetes.default.svc.cluster.local")),
            std::vector<std::string>{"10.1.0.1"});
  EXPECT_EQ(texts(ask("10-1-0-9.bench.pod.cluster.local")),
            std::vector<std::string>{"10.1.0.9"});
}

TEST_F(zone_test, known_names_without_the_type_are_nodata_with_an_soa) {
  for (auto name : {"mock.bench.svc.cluster.local", "bench.svc.cluster.local",
                    "svc.cluster.local", "cluster.local"}) {
    auto a = ask(name, type::aaaa);
    EXPECT_EQ(a.code, rcode::noerror) << name;
    EXPECT_TRUE(a.answers.empty()) << name;
    ASSERT_EQ(a.authority.size(), 1u) << name;
    EXPECT_EQ(a.authority[0].rtype, type::soa);
  }
  auto soa = texts(ask("cluster.local", type::soa));
  EXPECT_EQ(soa, std::vector<std::string>{
                     "ns.dns.cluster.local hostmaster.cluster.local 42 7200 "
                     "1800 86400 5"});
}

TEST_F(zone_test, unknown_names_are_nxdomain_and_others_refused) {
  for (auto name : {"nope.bench.svc.cluster.local",
                    "mock.other.svc.cluster.local", "other.svc.cluster.local",
                    "mock.bench.svc.cluster.local.bench.svc."
                    "cluster.local",
                    "x.cluster.local"}) {
    auto a = ask(name);
    EXPECT_EQ(a.code, rcode::nxdomain) << name;
    ASSERT_EQ(a.authority.size(), 1u) << name;
    EXPECT_EQ(a.authority[0].name, "cluster.local");
  }
  auto out = ask("example.com");
  EXPECT_EQ(out.code, rcode::refused);
  EXPECT_FALSE(out.authoritative);
  EXPECT_TRUE(out.authority.empty());
}

TEST_F(zone_test, an_external_name_service_is_a_cname) {
  auto a = ask("ext.bench.svc.cluster.local");
  ASSERT_EQ(a.answers.size(), 1u);
  EXPECT_EQ(a.answers[0].rtype, type::cname);
  EXPECT_EQ(texts(a), std::vector<std::string>{"db.example.com"});
}

TEST_F(zone_test, reverse_lookups_name_the_endpoint) {
  EXPECT_EQ(texts(ask("8.0.1.10.in-addr.arpa", type::ptr)),
            std::vector<std::string>{"run-w-0-1.run.bench.svc.cluster.local"});
  EXPECT_EQ(ask("99.0.1.10.in-addr.arpa", type::ptr).code, rcode::nxdomain);
}

} // namespace
} // namespace aiperf::k8s::sim::dns

namespace aiperf::k8s::sim::dns {
namespace {

TEST(dns_zone, a_service_without_slices_takes_its_endpoints) {
  std::map<std::string, json> services;
  services["a/host"] = service("a", "host", false);
  services["a/both"] = service("a", "both", false);
  std::map<std::string, json> slices;
  slices["a/both-1"]
      = slice("a", "both", json::array({endpoint("10.1.0.5", true)}));
  auto eps = [](const std::string& name, const std::string& ip) {
    return json{
        {"metadata", {{"name", name}, {"namespace", "a"}}},
        {"subsets", json::array({{{"addresses", json::array({{{"ip", ip}}})},
                                  {"notReadyAddresses",
                                   json::array({{{"ip", "10.9.9.9"}}})}}})}};
  };
  std::map<std::string, json> endpoints;
  endpoints["a/host"] = eps("host", "10.1.0.1");
  endpoints["a/both"] = eps("both", "10.1.0.99");
  auto z = build_zone(zone_config{}, services, slices, 1, endpoints);
  ASSERT_EQ(z.services["a/host"].endpoints.size(), 1u);
  EXPECT_EQ(z.services["a/host"].endpoints[0].ip, "10.1.0.1");
  // The slice wins where there is one.
  ASSERT_EQ(z.services["a/both"].endpoints.size(), 1u);
  EXPECT_EQ(z.services["a/both"].endpoints[0].ip, "10.1.0.5");
}

TEST(dns_zone, fields_of_an_unexpected_type_read_as_absent) {
  std::map<std::string, json> services;
  services["a/good"] = service("a", "good", true);
  services["a/odd"] = json::parse(
      R"({"metadata":{"name":"odd","namespace":"a"},"spec":{"type":7}})");
  std::map<std::string, json> slices;
  slices["a/good-1"]
      = slice("a", "good", json::array({endpoint("10.1.0.5", true)}));
  slices["a/bad-1"] = json::parse(R"({"metadata":{"namespace":["x"]}})");
  auto z = build_zone(zone_config{}, services, slices, 1);
  ASSERT_EQ(z.services.count("a/good"), 1u);
  ASSERT_EQ(z.services.count("a/odd"), 1u);
  EXPECT_EQ(z.services["a/odd"].type, "ClusterIP"); // type 7: the default
  ASSERT_EQ(z.services["a/good"].endpoints.size(), 1u);
  EXPECT_EQ(z.services["a/good"].endpoints[0].ip, "10.1.0.5");
}

} // namespace
} // namespace aiperf::k8s::sim::dns

namespace aiperf::k8s::sim::dns {
namespace {

TEST_F(zone_test, any_name_and_type_gets_one_of_the_expected_answers) {
  const std::vector<std::string> parts
      = {"run",      "mock",    "bench", "svc",  "pod",
         "cluster",  "local",   "_http", "_tcp", "run-w-0-0",
         "10-1-0-5", "in-addr", "arpa",  "10",   "x"};
  const std::vector<std::uint16_t> types
      = {type::a,   type::aaaa, type::srv,  type::ptr, type::soa,
         type::any, type::txt,  type::axfr, 999};
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    question q;
    auto n = rng() % 8;
    for (std::size_t k = 0; k < n; ++k)
      q.labels.push_back(parts[rng() % parts.size()]);
    q.qtype = types[rng() % types.size()];
    q.qclass = rng() % 10 == 0 ? 3 : class_in;
    auto a = lookup(z, q);
    ASSERT_TRUE(a.code == rcode::noerror || a.code == rcode::nxdomain
                || a.code == rcode::refused)
        << q.name();
    if (a.code == rcode::refused) {
      EXPECT_TRUE(a.answers.empty());
    } else if (a.answers.empty()) {
      EXPECT_EQ(a.authority.size(), 1u) << q.name(); // the SOA
    }
    query wire;
    wire.q = q;
    auto out = encode_response(wire, a, 512);
    EXPECT_LE(out.size(), 512u);
    EXPECT_TRUE(decode_message(out.data(), out.size()).has_value())
        << q.name() << " " << q.qtype;
  }
}

} // namespace
} // namespace aiperf::k8s::sim::dns
