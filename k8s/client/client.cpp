#include "k8s/client/client.hpp"

#include "k8s/api/json.hpp"
#include "k8s/client/credentials.hpp"
#include "k8s/client/transport.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/object/wire.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <thread>
#include <vector>

namespace aiperf::k8s::client {

namespace {

using http_done_atom = caf::atom_constant<caf::atom("k8sc_done")>;
using watch_open_atom = caf::atom_constant<caf::atom("k8sc_wopen")>;
using watch_data_atom = caf::atom_constant<caf::atom("k8sc_wdata")>;
using watch_closed_atom = caf::atom_constant<caf::atom("k8sc_wend")>;
using retry_atom = caf::atom_constant<caf::atom("k8sc_retry")>;
using exec_done_atom = caf::atom_constant<caf::atom("k8sc_exec")>;
using exec_failed_atom = caf::atom_constant<caf::atom("k8sc_exerr")>;

// The public interface plus what the I/O thread and the timers send.
using client_impl = api_actor::extend<
    caf::reacts_to<http_done_atom, std::uint64_t, http_result>,
    caf::reacts_to<watch_open_atom, std::uint64_t>,
    caf::reacts_to<watch_data_atom, std::uint64_t, std::vector<watch_event>>,
    caf::reacts_to<watch_closed_atom, std::uint64_t, std::string>,
    caf::reacts_to<retry_atom, std::uint64_t>,
    caf::reacts_to<exec_done_atom, exec_credential>,
    caf::reacts_to<exec_failed_atom, caf::error>>;

/// Sends to the actor from the I/O thread without keeping it alive: the
/// actor owns the transport, so a strong handle there would be a cycle.
template <class... Ts>
void post_to(const caf::weak_actor_ptr& weak, Ts&&... xs) {
  if (auto strong = weak.lock())
    caf::anon_send(caf::actor_cast<client_impl>(strong),
                   std::forward<Ts>(xs)...);
}

// -- watch event framing ------------------------------------------------------

std::size_t skip_ws(std::string_view s, std::size_t i) {
  while (i < s.size()
         && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
    ++i;
  return i;
}

/// The end of the JSON value starting at `i` of an already validated text.
std::size_t skip_value(std::string_view s, std::size_t i) {
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\')
        ++i;
      else if (s[i] == '"')
        return i + 1;
    }
    return s.size();
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (c == '"') {
        i = skip_value(s, i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0)
          return i + 1;
      }
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']'
         && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
    ++i;
  return i;
}

std::string malformed_event_status(std::string_view line) {
  status st;
  st.reason = "InternalError";
  st.code = 500;
  st.message = "malformed watch event from the server: "
               + std::string{line.substr(0, 200)};
  return status_to_json(st).dump();
}

/// `{"type":"ADDED","object":{...}}` -> the type and the object's bytes as
/// the server wrote them (no re-encoding). A line that is not such an
/// object becomes an ERROR event with an InternalError Status.
watch_event parse_event(std::string_view line) {
  watch_event ev;
  if (!json::accept(line.begin(), line.end())) {
    ev.type = "ERROR";
    ev.object = malformed_event_status(line);
    return ev;
  }
  auto i = skip_ws(line, 0);
  if (i >= line.size() || line[i] != '{') {
    ev.type = "ERROR";
    ev.object = malformed_event_status(line);
    return ev;
  }
  ++i;
  for (;;) {
    i = skip_ws(line, i);
    if (i >= line.size() || line[i] != '"')
      break;
    auto key_end = skip_value(line, i);
    auto key = line.substr(i + 1, key_end - i - 2);
    i = skip_ws(line, key_end);
    if (i >= line.size() || line[i] != ':')
      break;
    i = skip_ws(line, i + 1);
    auto value_end = skip_value(line, i);
    auto value = line.substr(i, value_end - i);
    if (key == "type" && value.size() >= 2 && value.front() == '"')
      ev.type = std::string{value.substr(1, value.size() - 2)};
    else if (key == "object")
      ev.object = std::string{value};
    i = skip_ws(line, value_end);
    if (i >= line.size() || line[i] != ',')
      break;
    ++i;
  }
  if (ev.type.empty()) {
    ev.type = "ERROR";
    ev.object = malformed_event_status(line);
  } else if (ev.object.empty()) {
    ev.object = "{}";
  }
  return ev;
}

// -- the actor ----------------------------------------------------------------

struct operation {
  request req;
  http_call call;
  bool watch = false;
  caf::typed_response_promise<response> reply;
  caf::typed_response_promise<std::uint64_t> watch_reply;
  watch_sink_actor sink;
  int retries = 0;
  bool auth_retried = false;
  transport* via = nullptr;
  std::uint64_t stream_id = 0;
  bool open = false;
};

struct client_state {
  static inline const char* name = "k8s-client";
  client_config cfg;
  client_options opts;
  std::shared_ptr<transport> tx;
  /// Transports replaced when an exec plugin changed the client
  /// certificate; kept until exit for the streams still running on them.
  std::vector<std::shared_ptr<transport>> retired;
  std::optional<token_file_source> token_file;
  std::optional<exec_credential> exec_cred;
  /// When exec_cred was fetched: a credential the plugin has just given is
  /// used once even if already expired, so a broken clock or plugin fails
  /// at the server instead of looping here.
  std::int64_t exec_fetched_ns = 0;
  bool exec_running = false;
  std::vector<std::uint64_t> waiting_for_exec;
  std::map<std::uint64_t, operation> ops;
  std::uint64_t next_id = 0;

  ~client_state() {
    // The actor may die on a transport's I/O thread (the last handle was
    // the one a completion was sent with): that thread cannot join itself,
    // so the transports are then closed from a thread of their own.
    retired.push_back(std::move(tx));
    bool own_thread
        = std::any_of(retired.begin(), retired.end(),
                      [](const auto& t) { return t && t->on_io_thread(); });
    if (own_thread)
      std::thread{[doomed = std::move(retired)]() mutable {
        doomed.clear();
      }}.detach();
  }
};

using client_ptr = client_impl::stateful_pointer<client_state>;

std::int64_t wall_now(client_ptr self) {
  return self->state.opts.wall_clock_ns();
}

std::string metrics_resource(const resource_ref& ref) {
  return ref.subresource.empty() ? ref.resource
                                 : ref.resource + "/" + ref.subresource;
}

void count(client_ptr self, const operation& op, std::string_view code) {
  if (auto& m = self->state.opts.metrics)
    m->count(to_string(op.watch ? verb::watch : op.req.verb),
             metrics_resource(op.req.ref), code);
}

transport_options transport_options_of(const client_config& cfg,
                                       const exec_credential* cred) {
  transport_options t;
  t.server = cfg.server;
  t.ca_pem = cfg.ca_pem;
  t.client_cert_pem = cfg.client_cert_pem;
  t.client_key_pem = cfg.client_key_pem;
  if (cred != nullptr && !cred->client_cert_pem.empty()) {
    t.client_cert_pem = cred->client_cert_pem;
    t.client_key_pem = cred->client_key_pem;
  }
  t.insecure_skip_tls_verify = cfg.insecure_skip_tls_verify;
  t.tls_server_name = cfg.tls_server_name;
  t.proxy_url = cfg.proxy_url;
  return t;
}

void fail(client_ptr self, std::uint64_t id, caf::error err) {
  auto i = self->state.ops.find(id);
  if (i == self->state.ops.end())
    return;
  auto& op = i->second;
  if (op.watch)
    op.watch_reply.deliver(std::move(err));
  else
    op.reply.deliver(std::move(err));
  self->state.ops.erase(i);
}

void start(client_ptr self, std::uint64_t id);

void run_exec(client_ptr self) {
  auto& st = self->state;
  if (st.exec_running)
    return;
  st.exec_running = true;
  // The plugin blocks (it may take seconds, gcloud does): a detached actor
  // runs it once, sends the outcome and ends. No request timeout: the
  // callers waiting for a credential have their own.
  auto me = caf::actor_cast<client_impl>(self);
  self->spawn<caf::detached>(
      [](caf::event_based_actor* worker, client_impl client, exec_config exec,
         client_config cfg) {
        auto cred = run_exec_plugin(exec, cfg);
        if (cred)
          worker->send(client, exec_done_atom::value, std::move(*cred));
        else
          worker->send(client, exec_failed_atom::value,
                       std::move(cred.error()));
      },
      me, *st.cfg.exec, st.cfg);
}

std::vector<std::uint64_t> exec_finished(client_ptr self) {
  self->state.exec_running = false;
  auto waiting = std::move(self->state.waiting_for_exec);
  self->state.waiting_for_exec.clear();
  return waiting;
}

void on_exec_done(client_ptr self, exec_credential& cred) {
  auto& st = self->state;
  bool new_cert = !cred.client_cert_pem.empty()
                  && (!st.exec_cred
                      || st.exec_cred->client_cert_pem != cred.client_cert_pem
                      || st.exec_cred->client_key_pem != cred.client_key_pem);
  st.exec_cred = std::move(cred);
  st.exec_fetched_ns = wall_now(self);
  auto waiting = exec_finished(self);
  if (new_cert) {
    auto tx = transport::make(transport_options_of(st.cfg, &*st.exec_cred));
    if (!tx) {
      status s;
      s.message = "exec plugin credential: " + error_message(tx.error());
      for (auto id : waiting)
        if (auto i = st.ops.find(id); i != st.ops.end())
          fail(self, id, make_status_error(describe(i->second.req), s));
      return;
    }
    st.retired.push_back(std::move(st.tx));
    st.tx = std::move(*tx);
  }
  for (auto id : waiting)
    start(self, id);
}

void on_exec_failed(client_ptr self, const caf::error& err) {
  for (auto id : exec_finished(self)) {
    auto i = self->state.ops.find(id);
    if (i == self->state.ops.end())
      continue;
    status st;
    st.message = error_message(err);
    fail(self, id, make_status_error(describe(i->second.req), std::move(st)));
  }
}

/// The Authorization header: "" for none; nullopt when an exec plugin must
/// run first (the operation is parked); an error when a credential failed.
caf::expected<std::optional<std::string>> authorization(client_ptr self) {
  auto& st = self->state;
  if (st.cfg.exec) {
    auto now = wall_now(self);
    if (!st.exec_cred
        || (!usable(*st.exec_cred, now)
            && now - st.exec_fetched_ns > 10'000'000'000))
      return std::optional<std::string>{};
    if (!st.exec_cred->token.empty())
      return std::optional<std::string>{"Bearer " + st.exec_cred->token};
    return std::optional<std::string>{std::string{}};
  }
  if (st.token_file) {
    auto tok = st.token_file->token(wall_now(self));
    if (!tok)
      return std::move(tok.error());
    return std::optional<std::string>{"Bearer " + *tok};
  }
  if (!st.cfg.token.empty())
    return std::optional<std::string>{"Bearer " + st.cfg.token};
  if (!st.cfg.username.empty())
    return std::optional<std::string>{
        "Basic " + base64_encode(st.cfg.username + ":" + st.cfg.password)};
  return std::optional<std::string>{std::string{}};
}

void start(client_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto i = st.ops.find(id);
  if (i == st.ops.end())
    return;
  auto& op = i->second;
  auto auth = authorization(self);
  if (!auth) {
    status s;
    s.message = error_message(auth.error());
    fail(self, id, make_status_error(describe(op.req), std::move(s)));
    return;
  }
  if (!auth->has_value()) {
    st.waiting_for_exec.push_back(id);
    run_exec(self);
    return;
  }
  http_exchange ex;
  ex.method = op.call.method;
  ex.target = op.call.target;
  ex.body = op.call.body;
  ex.timeout_ms = st.opts.request_timeout.count();
  ex.headers.emplace_back("Accept", op.call.accept.empty() ? "application/json"
                                                           : op.call.accept);
  if (!op.call.content_type.empty())
    ex.headers.emplace_back("Content-Type", op.call.content_type);
  bool has_agent = false;
  for (const auto& [k, v] : op.call.headers) {
    has_agent = has_agent || k == "User-Agent";
    ex.headers.emplace_back(k, v);
  }
  if (!has_agent)
    ex.headers.emplace_back("User-Agent", st.opts.user_agent);
  if (!(*auth)->empty())
    ex.headers.emplace_back("Authorization", **auth);
  caf::weak_actor_ptr me = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
  op.via = st.tx.get();
  if (!op.watch) {
    st.tx->send(std::move(ex), [me, id](http_result r) {
      post_to(me, http_done_atom::value, id, std::move(r));
    });
    return;
  }
  stream_handlers h;
  auto buffer = std::make_shared<std::string>();
  h.on_open = [me, id] { post_to(me, watch_open_atom::value, id); };
  h.on_data = [me, id, buffer](std::string_view bytes) {
    buffer->append(bytes);
    std::vector<watch_event> events;
    std::size_t from = 0;
    for (auto nl = buffer->find('\n'); nl != std::string::npos;
         nl = buffer->find('\n', from)) {
      std::string_view line{buffer->data() + from, nl - from};
      from = nl + 1;
      if (skip_ws(line, 0) < line.size())
        events.push_back(parse_event(line));
    }
    buffer->erase(0, from);
    if (!events.empty())
      post_to(me, watch_data_atom::value, id, std::move(events));
  };
  h.on_refused = [me, id](http_result r) {
    post_to(me, http_done_atom::value, id, std::move(r));
  };
  h.on_end = [me, id, buffer](std::string err) {
    // A last event without its newline still counts.
    if (err.empty() && skip_ws(*buffer, 0) < buffer->size())
      post_to(me, watch_data_atom::value, id,
              std::vector<watch_event>{parse_event(*buffer)});
    post_to(me, watch_closed_atom::value, id, std::move(err));
  };
  op.stream_id = st.tx->open_stream(std::move(ex), std::move(h));
}

/// Seconds of an integer Retry-After, or nullopt (an HTTP-date is not
/// honoured, as in client-go).
std::optional<int> retry_after_seconds(std::string_view text) {
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n < 0)
    return std::nullopt;
  return n;
}

void on_result(client_ptr self, std::uint64_t id, http_result& r) {
  auto& st = self->state;
  auto i = st.ops.find(id);
  if (i == st.ops.end())
    return;
  auto& op = i->second;
  auto what = describe(op.req);
  if (!r.error.empty()) {
    count(self, op, "<error>");
    status s;
    s.message = r.error;
    if (r.timed_out) {
      s.reason = "Timeout";
      fail(self, id,
           make_error(k8s::errc::timeout, what + ": " + r.error, std::move(s)));
    } else {
      fail(self, id, make_status_error(what, std::move(s)));
    }
    return;
  }
  count(self, op, std::to_string(r.status));
  if (r.status >= 200 && r.status < 300 && !op.watch) {
    op.reply.deliver(
        response{r.status, std::move(r.body), std::move(r.warnings)});
    st.ops.erase(i);
    return;
  }
  if (r.status == 401 && !op.auth_retried && (st.cfg.exec || st.token_file)) {
    // The credential expired early or was rotated: fetch it again, once.
    op.auth_retried = true;
    if (st.cfg.exec)
      st.exec_cred.reset();
    else
      st.token_file->invalidate();
    start(self, id);
    return;
  }
  if (r.status == 429 || (r.status >= 500 && r.status <= 599)) {
    if (auto secs = retry_after_seconds(r.retry_after);
        secs && op.retries < st.opts.max_retries) {
      ++op.retries;
      auto delay
          = std::min(std::chrono::seconds{*secs}, st.opts.max_retry_after);
      self->delayed_send(self, delay, retry_atom::value, id);
      return;
    }
  }
  fail(self, id, error_of_response(r.status, r.body, what));
}

} // namespace

std::string describe(const request& r) {
  std::string out = to_string(r.verb);
  out += ' ';
  out += r.ref.resource;
  if (!r.ref.group.empty()) {
    out += '.';
    out += r.ref.group;
  }
  if (!r.ref.name.empty()) {
    out += '/';
    out += r.ref.name;
  }
  if (!r.ref.subresource.empty()) {
    out += '/';
    out += r.ref.subresource;
  }
  return out;
}

namespace {

client_impl::behavior_type client_behavior(client_ptr self, client_config cfg,
                                           client_options opts,
                                           std::shared_ptr<transport> tx) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.opts = std::move(opts);
  st.tx = std::move(tx);
  if (!st.cfg.token_file.empty())
    st.token_file.emplace(st.cfg.token_file);
  return {
      [self](request& req) -> caf::result<response> {
        auto& st = self->state;
        auto id = ++st.next_id;
        auto& op = st.ops[id];
        op.call = to_http(req);
        op.req = std::move(req);
        op.reply = self->make_response_promise<response>();
        auto rp = op.reply;
        start(self, id);
        return rp;
      },
      [self](watch_atom, request& req,
             watch_sink_actor& sink) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        auto id = ++st.next_id;
        auto& op = st.ops[id];
        req.verb = verb::watch;
        op.call = to_http(req);
        op.req = std::move(req);
        op.watch = true;
        op.sink = std::move(sink);
        op.watch_reply = self->make_response_promise<std::uint64_t>();
        auto rp = op.watch_reply;
        start(self, id);
        return rp;
      },
      [self](unwatch_atom, std::uint64_t id) {
        auto& st = self->state;
        auto i = st.ops.find(id);
        if (i == st.ops.end() || !i->second.watch || !i->second.open)
          return;
        auto& op = i->second;
        op.via->close_stream(op.stream_id);
        status s;
        s.message = "unwatched";
        self->send(op.sink, watch_end_atom::value, id,
                   make_status_error("watch " + metrics_resource(op.req.ref),
                                     std::move(s)));
        st.ops.erase(i);
      },
      [self](http_done_atom, std::uint64_t id, http_result& r) {
        on_result(self, id, r);
      },
      [self](watch_open_atom, std::uint64_t id) {
        auto i = self->state.ops.find(id);
        if (i == self->state.ops.end())
          return;
        auto& op = i->second;
        count(self, op, "200");
        op.open = true;
        op.watch_reply.deliver(id);
      },
      [self](watch_data_atom, std::uint64_t id,
             std::vector<watch_event>& events) {
        auto i = self->state.ops.find(id);
        if (i == self->state.ops.end() || !i->second.open)
          return;
        auto& op = i->second;
        // An ERROR event is the last of its watch: nothing after it is sent.
        auto err = std::find_if(
            events.begin(), events.end(),
            [](const watch_event& e) { return e.type == "ERROR"; });
        bool last = err != events.end();
        if (last)
          events.erase(err + 1, events.end());
        self->send(op.sink, events_atom::value, id, std::move(events));
        if (last) {
          op.via->close_stream(op.stream_id);
          self->send(op.sink, watch_end_atom::value, id, caf::error{});
          self->state.ops.erase(i);
        }
      },
      [self](watch_closed_atom, std::uint64_t id, std::string& err) {
        auto i = self->state.ops.find(id);
        if (i == self->state.ops.end() || !i->second.open)
          return;
        auto& op = i->second;
        caf::error reason;
        if (!err.empty()) {
          status s;
          s.message = err;
          reason = make_status_error("watch " + metrics_resource(op.req.ref),
                                     std::move(s));
        }
        self->send(op.sink, watch_end_atom::value, id, std::move(reason));
        self->state.ops.erase(i);
      },
      [self](retry_atom, std::uint64_t id) { start(self, id); },
      [self](exec_done_atom, exec_credential& cred) {
        on_exec_done(self, cred);
      },
      [self](exec_failed_atom, const caf::error& err) {
        on_exec_failed(self, err);
      },
  };
}

} // namespace

caf::expected<api_actor> spawn_client(caf::actor_system& sys, client_config cfg,
                                      client_options opts) {
  if (!opts.wall_clock_ns)
    opts.wall_clock_ns = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  auto tx = transport::make(transport_options_of(cfg, nullptr));
  if (!tx)
    return std::move(tx.error());
  std::shared_ptr<transport> t = std::move(*tx);
  auto actor = sys.spawn(client_behavior, std::move(cfg), std::move(opts),
                         std::move(t));
  return caf::actor_cast<api_actor>(actor);
}

} // namespace aiperf::k8s::client
