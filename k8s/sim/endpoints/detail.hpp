// What the three controllers share: reading Services and pods the way
// staging/src/k8s.io/endpointslice/util does, the trigger-time tracker of
// pkg/controller/util/endpoint, and the actor skeleton (watches, one write
// per key at a time, retries). Internal to k8s/sim/endpoints.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"
#include "k8s/sim/endpoints/watch_set.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::net::detail {

inline constexpr const char* headless_label = "service.kubernetes.io/headless";
inline constexpr const char* trigger_time_annotation
    = "endpoints.kubernetes.io/last-change-trigger-time";

/// The text of obj[a][b]... or "" when absent or not a string.
[[nodiscard]] std::string str(const json& obj, const char* a,
                              const char* b = nullptr);

[[nodiscard]] std::string namespace_of(const std::string& key);

/// A Service the controllers give endpoints to: it has a non-empty
/// selector and is not ExternalName.
[[nodiscard]] bool has_selector(const json& svc);
/// Whether the labels of `pod` match the Service's selector.
[[nodiscard]] bool selects(const json& svc, const json& pod);
/// The keys of the Services in `services` (by key) of the pod's namespace
/// that selected the pod `before` or select it `after` (either may be null).
[[nodiscard]] std::vector<std::string>
services_selecting(const std::map<std::string, json>& services,
                   const std::string& pod_key, const json* before,
                   const json* after);
/// clusterIP None. (An empty clusterIP is not headless here: the simulator
/// allocates no service IPs.)
[[nodiscard]] bool headless(const json& svc);
[[nodiscard]] bool publish_not_ready(const json& svc);

/// The pod's Ready condition is True.
[[nodiscard]] bool pod_ready(const json& pod);
[[nodiscard]] bool pod_terminating(const json& pod);
/// ShouldPodBeInEndpoints: an IP, not Succeeded/Failed, and not being
/// deleted unless `include_terminating`.
[[nodiscard]] bool should_be_in_endpoints(const json& pod,
                                          bool include_terminating);
/// The pod's IPv4 address (podIPs, else podIP), or "".
[[nodiscard]] std::string pod_ipv4(const json& pod);
/// ShouldSetHostname: the pod has a hostname and its subdomain names the
/// Service (same namespace).
[[nodiscard]] bool should_set_hostname(const json& pod, const json& svc);
/// FindPort: the targetPort number, or the named container port (regular
/// containers, then sidecars) of the same protocol; nullopt when none.
[[nodiscard]] std::optional<std::int64_t> find_port(const json& pod,
                                                    const json& svc_port);
/// `{kind: Pod, namespace, name, uid}`.
[[nodiscard]] json target_ref(const json& pod);

/// The Service's labels for an Endpoints object or a slice: the Service's
/// own, without `skip` keys, plus the headless label when headless.
[[nodiscard]] json derived_labels(const json& svc,
                                  const std::set<std::string>& skip);

/// Equal as JSON values, whatever the order of object keys.
[[nodiscard]] bool same(const json& a, const json& b);

/// RFC 3339 with nanoseconds, trailing zeros dropped (Go's RFC3339Nano).
[[nodiscard]] std::string format_rfc3339_nano(std::int64_t unix_ns);

/// TriggerTimeTracker: per Service, the last trigger times seen (the
/// Service's creation, each pod's Ready transition); compute() answers the
/// earliest one that is new since the last call, 0 for none.
class trigger_tracker {
public:
  std::int64_t compute(const std::string& key, const json& svc,
                       const std::vector<const json*>& pods);
  void forget(const std::string& key) { services_.erase(key); }

private:
  struct state {
    std::int64_t service = 0;
    std::map<std::string, std::int64_t> pods;
  };
  std::map<std::string, state> services_;
};

/// One write per key at a time: what is under way, and what changed
/// meanwhile (synced again once the write is over).
struct write_gate {
  std::set<std::string> in_flight;
  std::set<std::string> dirty;

  /// False (and the key marked dirty) while a write for it is under way.
  bool begin(const std::string& key) {
    if (in_flight.count(key)) {
      dirty.insert(key);
      return false;
    }
    in_flight.insert(key);
    return true;
  }
};

/// Counts the writes of one sync; `done(ok)` runs once all have answered
/// (ok = none failed).
struct write_batch {
  std::size_t pending = 0;
  bool ok = true;
};

/// The shared behaviour. State must have `api_actor api; watch_set ws;
/// write_gate gate;` and `static void sync(ptr, const std::string&)`, and
/// `static void start(ptr)` set the watch_set callbacks.
template <class State>
using ctl_ptr = network_controller_actor::stateful_pointer<State>;

/// State::sync, with what a malformed object makes nlohmann throw caught:
/// that key is skipped (see watch_set).
template <class State>
void safe_sync(ctl_ptr<State> self, const std::string& key) {
  try {
    State::sync(self, key);
  } catch (const json::exception&) {
  }
}

/// Ends one key's writes: retried after retry_delay if one failed, synced
/// again at once if it changed meanwhile.
template <class State>
void finish(ctl_ptr<State> self, const std::string& key, bool ok) {
  auto& gate = self->state.gate;
  gate.in_flight.erase(key);
  bool again = gate.dirty.erase(key) > 0;
  if (!ok) {
    self->delayed_send(self, retry_delay, net_sync_atom::value, key);
    return;
  }
  if (again)
    safe_sync<State>(self, key);
}

/// Sends `req`; on success `on_ok(json answer)`, then one write of `batch`
/// is over. A 404 on delete and a 409 AlreadyExists on create count as
/// done (someone else did it).
template <class State, class OnOk>
void write(ctl_ptr<State> self, const std::string& key,
           std::shared_ptr<write_batch> batch, request req, OnOk on_ok) {
  ++batch->pending;
  auto v = req.verb;
  auto done = [self, key, batch](bool ok) {
    if (!ok)
      batch->ok = false;
    if (--batch->pending == 0)
      finish<State>(self, key, batch->ok);
  };
  self->request(self->state.api, api_timeout, std::move(req))
      .then(
          [done, on_ok](response& res) mutable {
            auto obj = json::parse(res.body, nullptr, false);
            if (!obj.is_discarded())
              on_ok(obj);
            done(true);
          },
          [done, v](caf::error& err) {
            bool benign
                = (v == verb::remove && is_error(err, errc::not_found))
                  || (v == verb::create && is_error(err, errc::already_exists));
            // A namespace being deleted refuses creates: nothing to retry.
            if (v == verb::create && is_error(err, errc::forbidden))
              benign = true;
            done(benign);
          });
}

/// No write was needed: the key is free again.
template <class State>
void finish_batch(ctl_ptr<State> self, const std::string& key,
                  const std::shared_ptr<write_batch>& batch) {
  if (batch->pending == 0)
    finish<State>(self, key, true);
}

template <class State>
typename network_controller_actor::behavior_type run(ctl_ptr<State> self,
                                                     api_actor api) {
  self->state.api = std::move(api);
  State::start(self);
  for (std::size_t i = 0; i < self->state.ws.kinds.size(); ++i)
    self->state.ws.start(self, i, self->state.api);
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& evs) {
        self->state.ws.on_events(self, id, evs, self->state.api);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        self->state.ws.on_end(self, id);
      },
      [self](net_relist_atom, std::uint64_t kind) {
        if (kind < self->state.ws.kinds.size())
          self->state.ws.start(self, kind, self->state.api);
      },
      [self](net_sync_atom, const std::string& key) { State::sync(self, key); },
  };
}

/// A request on `ref` (namespace and name filled in).
[[nodiscard]] request make_request(verb v, resource_ref ref,
                                   const std::string& ns,
                                   const std::string& name,
                                   std::string body = {});

} // namespace aiperf::k8s::sim::net::detail
