#include "runtime/http/fast_head.hpp"

#include <utility> // before Boost (g++ 12 + Boost 1.74)

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <gtest/gtest.h>

#include <strings.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::http {
namespace {

namespace bhttp = boost::beast::http;

/// What Beast (the authority) makes of a head.
struct reference {
  bool ok = false;
  std::size_t size = 0;
  int status = 0;
  std::optional<std::uint64_t> content_length;
  bool keep_alive = false;
  std::vector<std::pair<std::string, std::string>> fields;
};

reference beast_parse(const std::string& head) {
  reference out;
  bhttp::response_parser<bhttp::empty_body> p;
  p.eager(false); // stop after the head
  boost::system::error_code ec;
  auto used = p.put(boost::asio::buffer(head), ec);
  if (ec || !p.is_header_done())
    return out;
  out.ok = true;
  out.size = used;
  out.status = p.get().result_int();
  if (auto n = p.content_length())
    out.content_length = *n;
  out.keep_alive = p.keep_alive();
  for (auto& f : p.get())
    out.fields.emplace_back(std::string{f.name_string()},
                            std::string{f.value()});
  return out;
}

/// Checks the fast path against Beast on `head`: when the fast path takes
/// it, Beast must read exactly the same; every shorter prefix must be
/// declined (an incomplete head is never the fast path's). Returns whether
/// the fast path took it.
bool cross_check(const std::string& head) {
  std::array<header_view, max_header_fields> fields{};
  auto fast = parse_fast_head(head, fields);
  if (!fast)
    return false;
  auto ref = beast_parse(head);
  EXPECT_TRUE(ref.ok) << "fast path accepted what Beast rejects:\n" << head;
  if (!ref.ok)
    return true;
  EXPECT_EQ(fast->size, ref.size) << head;
  EXPECT_EQ(fast->status, ref.status) << head;
  EXPECT_EQ(std::optional<std::uint64_t>{fast->content_length},
            ref.content_length)
    << head;
  EXPECT_TRUE(ref.keep_alive) << head;
  auto stored = std::min(ref.fields.size(), fields.size());
  EXPECT_EQ(fast->field_count, stored) << head;
  std::string type;
  for (std::size_t i = 0; i < stored && i < fast->field_count; ++i) {
    EXPECT_EQ(fields[i].name, ref.fields[i].first) << head;
    EXPECT_EQ(fields[i].value, ref.fields[i].second) << head;
  }
  for (auto& [k, v] : ref.fields)
    if (k.size() == 12 && strncasecmp(k.data(), "content-type", 12) == 0)
      type = v;
  EXPECT_EQ(fast->content_type, type) << head;
  for (std::size_t cut = 0; cut < fast->size; ++cut) {
    EXPECT_FALSE(parse_fast_head(head.substr(0, cut), fields))
      << "accepted a prefix of " << cut << " bytes of:\n" << head;
  }
  return true;
}

const std::string nginx_head
  = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n"
    "Date: Sun, 29 Nov 2026 14:35:39 GMT\r\n"
    "Content-Type: text/event-stream\r\nContent-Length: 11740\r\n"
    "Last-Modified: Sun, 29 Nov 2026 14:35:38 GMT\r\n"
    "Connection: keep-alive\r\nETag: \"6b0c383a-2ddc\"\r\n"
    "Accept-Ranges: bytes\r\n\r\n";

// Verifies the shapes real servers send take the fast path and read exactly
// as Beast reads them (body bytes after the head are not part of it).
TEST(fast_head, common_heads_take_the_fast_path_and_match_beast) {
  std::vector<std::string> heads = {
    nginx_head,
    nginx_head + "data: {\"x\":1}\n\n",
    "HTTP/1.1 200 OK\r\ndate: Sun, 29 Nov 2026 14:35:39 GMT\r\n"
    "server: uvicorn\r\ncontent-length: 2\r\ncontent-type: "
    "application/json\r\n\r\nok",
    "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nContent-Length:5\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\nContent-Length: \t 5 \t\r\nX-Empty:\r\n"
    "X-Spaces:   a  b   \r\n\r\nhello",
    "HTTP/1.1 200 Ok\tfine \x80\xff\r\nX-Obs: caf\xc3\xa9\r\n"
    "Content-Length: 00012\r\n\r\n",
    "HTTP/1.1 200 OK\r\nCONNECTION: Keep-Alive\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nconnection: KEEP-ALIVE\r\ncOnTeNt-LeNgTh: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
    "Content-Length: 4\r\nX-Weird-Token!#$%&'*+-.^_`|~: v\r\n\r\n",
  };
  for (auto& h : heads)
    EXPECT_TRUE(cross_check(h)) << "not taken:\n" << h;
}

// Verifies more fields than the span holds are parsed, counted to the span
// and match Beast's first ones.
TEST(fast_head, many_fields_fill_the_span_in_order) {
  std::string h = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 40; ++i)
    h += "X-Field-" + std::to_string(i) + ": value " + std::to_string(i)
         + "\r\n";
  h += "Content-Length: 3\r\n\r\nabc";
  EXPECT_TRUE(cross_check(h));
}

// Verifies every shape outside the subset is declined (Beast then decides,
// accepting or rejecting it on its own).
TEST(fast_head, other_shapes_are_left_to_beast) {
  std::vector<std::string> heads = {
    "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
    // One byte off "keep-alive" (case-folding must not make '_' or ' ' a '-').
    "HTTP/1.1 200 OK\r\nConnection: keep_alive\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nConnection: keep alive\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nConnection: keep-alivf\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n\r\n",
    "HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
    "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\n",
    "HTTP/1.1 600 Odd\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\n\r\n",                                // no length
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Fold: a\r\n b\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\nContent-Length: 1\n\n",                    // bare LF
    "HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Ctl: a\x01" "b\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Del: a\x7f\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Bad : v\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX(bad): v\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Type: b\r\n"
    "Content-Length: 1\r\n\r\n",
    "HTTP/1.1 2x0 OK\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 O\x01K\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\r\n\r\n",
    "HTTP/1.1  200 OK\r\nContent-Length: 1\r\n\r\n",
    "http/1.1 200 OK\r\nContent-Length: 1\r\n\r\n",
    "",
    "HTTP/1.1 20",
  };
  for (auto& h : heads)
    EXPECT_FALSE(cross_check(h)) << "taken:\n" << h;
}

// Verifies that, over a spread of generated heads (field counts, OWS,
// letter case, statuses), whatever the fast path takes matches Beast and
// that it takes the plain ones.
TEST(fast_head, generated_heads_match_beast) {
  const std::vector<std::string> statuses = {"200 OK", "201 Created",
                                             "429 Too Many", "503 Busy",
                                             "204 No Content", "199 x"};
  const std::vector<std::string> ows = {"", " ", "\t", "  \t"};
  const std::vector<std::string> names = {"content-length", "Content-Length",
                                          "CONTENT-LENGTH"};
  int taken = 0;
  int total = 0;
  for (auto& st : statuses)
    for (auto& before : ows)
      for (auto& after : ows)
        for (auto& name : names)
          for (int extra = 0; extra < 3; ++extra) {
            std::string h = "HTTP/1.1 " + st + "\r\n";
            for (int i = 0; i < extra; ++i)
              h += "X-" + std::to_string(i) + ":" + before + "v" + after
                   + "\r\n";
            h += name + ":" + before + "7" + after + "\r\n";
            h += "Content-Type:" + before + "text/plain" + after + "\r\n\r\n";
            h += "1234567";
            ++total;
            bool plain = !st.starts_with("204") && !st.starts_with("199");
            bool took = cross_check(h);
            taken += took ? 1 : 0;
            EXPECT_EQ(took, plain) << h;
          }
  EXPECT_GT(taken, total / 2);
}

} // namespace
} // namespace aiperf::http
