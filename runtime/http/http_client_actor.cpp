#include "runtime/http/http_client_actor.hpp"

#include <caf/all.hpp>

#include <memory>
#include <unordered_map>

namespace aiperf::http {

namespace {

using done_atom = caf::atom_constant<caf::atom("http_done")>;

// The public interface plus the completion message from the I/O thread.
using http_client_impl = http_client_actor::extend<caf::reacts_to<
  done_atom, std::uint64_t, http_response_msg, std::uint8_t, std::string>>;

/// Collects one response and reports it to the actor. Owns itself from
/// submit() until on_complete, the last callback the client makes on it.
class collecting_sink final : public response_sink {
public:
  collecting_sink(http_client_impl me, std::uint64_t id)
    : me_(std::move(me)), id_(id) {
    // nop
  }

  void on_send(std::int64_t) override {
    // nop: a retry restarts the exchange, the collected body stays empty
  }

  void on_headers(const response_head& head, std::int64_t) override {
    resp_.status = head.status;
    resp_.content_type.assign(head.content_type);
  }

  void on_body(std::string_view bytes, std::int64_t) override {
    resp_.body.append(bytes);
  }

  void on_complete(const error_info& err, std::int64_t) override {
    std::unique_ptr<collecting_sink> owned{this};
    caf::anon_send(me_, done_atom::value, id_, std::move(resp_),
                   static_cast<std::uint8_t>(err.category), err.message);
  }

private:
  http_client_impl me_;
  std::uint64_t id_;
  http_response_msg resp_;
};

struct http_client_state {
  static inline const char* name = "http-client";
  struct entry {
    caf::typed_response_promise<http_response_msg> promise;
    request_id client_id = 0;
  };
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, entry> pending;
};

http_client_impl::behavior_type
http_client_behavior(http_client_impl::stateful_pointer<http_client_state> self,
                     client* c) {
  return {
    [=](http_request_msg& msg) -> caf::result<http_response_msg> {
      // Query strings are fine for a full request URL (parse_url rejects
      // them only because base URLs get paths appended).
      std::string_view text = msg.url;
      std::string_view query;
      if (auto q = text.find('?'); q != std::string_view::npos) {
        query = text.substr(q);
        text = text.substr(0, q);
      }
      auto parsed = parse_url(text);
      if (!parsed)
        return std::move(parsed.error());
      request req;
      req.ep = parsed->ep;
      req.method = std::move(msg.method);
      req.target = parsed->base_path.empty() ? "/"
                                                   : parsed->base_path;
      req.target += query;
      req.headers = std::move(msg.headers);
      req.body = std::move(msg.body);
      req.timeout_ms = msg.timeout_ms;
      auto id = ++self->state.next_id;
      auto me = caf::actor_cast<http_client_impl>(self);
      auto sink = std::make_unique<collecting_sink>(std::move(me), id);
      auto rp = self->make_response_promise<http_response_msg>();
      auto cid = c->submit(std::move(req), *sink.release());
      self->state.pending.emplace(id, http_client_state::entry{rp, cid});
      return rp;
    },
    [=](done_atom, std::uint64_t id, http_response_msg& resp,
        std::uint8_t category, std::string& message) {
      auto i = self->state.pending.find(id);
      if (i == self->state.pending.end())
        return;
      auto rp = i->second.promise;
      self->state.pending.erase(i);
      if (category == static_cast<std::uint8_t>(error_category::none))
        rp.deliver(std::move(resp));
      else
        rp.deliver(make_http_error(
          error_info{static_cast<error_category>(category), 0,
                     std::move(message)}));
    },
  };
}

} // namespace

caf::error make_http_error(const error_info& err) {
  return make_error(err.category, err.message, err.code);
}

http_client_actor spawn_http_client(caf::actor_system& sys, client& c) {
  return sys.spawn(http_client_behavior, &c);
}

} // namespace aiperf::http
