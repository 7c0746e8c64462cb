// The informer on simulated time against a scripted api_actor: paged list,
// watch from the list's resourceVersion, resume after a stream end, back-off
// after a broken one, relist on 410, the cache, the work queue and resync.
#include "k8s/api/json.hpp"
#include "k8s/informer/informer.hpp"
#include "tests/support/caf_gtest.hpp"

#include <deque>
#include <memory>

namespace aiperf::k8s::informer {
namespace {

using namespace std::chrono_literals;

/// What the fake API server was asked and will answer.
struct script {
  std::vector<request> requests; // list and watch requests, in order
  std::deque<caf::expected<response>> list_answers;
  std::deque<caf::error> watch_refusals; // the next watches refused with these
  watch_sink_actor sink;
  std::uint64_t watch_id = 0;
  std::vector<std::uint64_t> unwatched;
};

api_actor::behavior_type fake_api(api_actor::pointer,
                                  std::shared_ptr<script> s) {
  return {
      [s](request& r) -> caf::result<response> {
        s->requests.push_back(r);
        if (s->list_answers.empty())
          return make_error(k8s::errc::unavailable, "no scripted answer",
                            status{"ServiceUnavailable", 503, "", {}});
        auto answer = std::move(s->list_answers.front());
        s->list_answers.pop_front();
        if (!answer)
          return std::move(answer.error());
        return std::move(*answer);
      },
      [s](watch_atom, request& r,
          watch_sink_actor& sink) -> caf::result<std::uint64_t> {
        s->requests.push_back(r);
        if (!s->watch_refusals.empty()) {
          auto err = std::move(s->watch_refusals.front());
          s->watch_refusals.pop_front();
          return err;
        }
        s->sink = sink;
        return ++s->watch_id;
      },
      [s](unwatch_atom, std::uint64_t id) { s->unwatched.push_back(id); },
  };
}

struct owner_log {
  std::vector<std::string> keys;
};

owner_actor::behavior_type recording_owner(owner_actor::pointer,
                                           std::shared_ptr<owner_log> log) {
  return {
      [log](reconcile_atom, std::string& key) { log->keys.push_back(key); },
  };
}

std::string cm(const std::string& name, const std::string& rv) {
  json obj
      = {{"metadata",
          {{"name", name}, {"namespace", "bench"}, {"resourceVersion", rv}}},
         {"data", {{"k", name}}}};
  return obj.dump();
}

response list_of(std::vector<std::string> items, const std::string& rv,
                 const std::string& cont = "") {
  json list = {{"kind", "ConfigMapList"},
               {"apiVersion", "v1"},
               {"metadata", json::object()}};
  if (!rv.empty())
    list["metadata"]["resourceVersion"] = rv;
  if (!cont.empty())
    list["metadata"]["continue"] = cont;
  list["items"] = json::array();
  for (const auto& i : items)
    list["items"].push_back(json::parse(i));
  return response{200, list.dump(), {}};
}

watch_event event(const std::string& type, const std::string& object) {
  return watch_event{type, object};
}

caf::error gone() {
  return make_error(
      k8s::errc::gone, "too old resource version",
      status{"Expired", 410, "too old resource version: 5 (9)", {}});
}

class informer_test : public caf_gtest::fixture<> {
protected:
  void start(informer_config cfg = {}) {
    cfg.ref = resource_ref{"", "v1", "configmaps", "bench", "", ""};
    if (cfg.seed == 0)
      cfg.seed = 42;
    api = sys.spawn(fake_api, s);
    owner = sys.spawn(recording_owner, log);
    informer = spawn_informer(sys, api, std::move(cfg), owner);
    drain();
  }
  void events(std::vector<watch_event> evs) {
    self->send(s->sink, events_atom::value, s->watch_id, std::move(evs));
    drain();
  }
  void done(const std::string& key, caf::timespan after = {},
            bool failed = false) {
    self->send(informer, done_atom::value, key, after, failed);
    drain();
  }
  std::string cached(const std::string& key) {
    auto r = request<std::string>(informer, cache_get_atom::value, key);
    return r ? *r : "<" + error_message(r.error()) + ">";
  }

  std::shared_ptr<script> s = std::make_shared<script>();
  std::shared_ptr<owner_log> log = std::make_shared<owner_log>();
  api_actor api;
  owner_actor owner;
  informer_actor informer;
};

TEST_F(informer_test,
       lists_in_pages_then_watches_from_the_lists_resource_version) {
  s->list_answers.push_back(list_of({cm("a", "3")}, "", "next-page"));
  s->list_answers.push_back(list_of({cm("b", "4")}, "10"));
  start();
  ASSERT_EQ(s->requests.size(), 3u);
  EXPECT_EQ(s->requests[0].verb, verb::list);
  EXPECT_EQ(s->requests[0].limit, 500);
  EXPECT_EQ(s->requests[0].resource_version, "0");
  EXPECT_EQ(s->requests[0].ref.namespace_name, "bench");
  EXPECT_EQ(s->requests[1].continue_token, "next-page");
  EXPECT_EQ(s->requests[1].resource_version, "");
  const auto& w = s->requests[2];
  EXPECT_EQ(w.verb, verb::watch);
  EXPECT_EQ(w.resource_version, "10");
  EXPECT_TRUE(w.allow_watch_bookmarks);
  EXPECT_GE(w.timeout_seconds, 300);
  EXPECT_LE(w.timeout_seconds, 600);
  EXPECT_EQ(request<bool>(informer, synced_atom::value), true);
  // One key at a time (workers = 1), in list order.
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/a"}));
  done("bench/a");
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/a", "bench/b"}));
  auto a = json::parse(cached("bench/a"));
  EXPECT_EQ(a["kind"],
            "ConfigMap"); // the typed list's items get their kind back
  EXPECT_EQ(a["apiVersion"], "v1");
  EXPECT_EQ(a["data"]["k"], "a");
  EXPECT_EQ(cached("bench/zzz"),
            "<configmaps \"bench/zzz\" not found in the informer's cache>");
}

TEST_F(informer_test,
       events_update_the_cache_and_a_stream_end_resumes_from_the_last_rv) {
  s->list_answers.push_back(list_of({cm("a", "3"), cm("b", "4")}, "10"));
  start();
  done("bench/a");
  done("bench/b");
  log->keys.clear();
  events(
      {event("ADDED", cm("c", "11")), event("MODIFIED", cm("a", "12")),
       event("DELETED", cm("b", "13")),
       event("BOOKMARK",
             R"({"kind":"ConfigMap","metadata":{"resourceVersion":"14"}})")});
  EXPECT_EQ(json::parse(cached("bench/c"))["metadata"]["resourceVersion"],
            "11");
  EXPECT_EQ(json::parse(cached("bench/a"))["metadata"]["resourceVersion"],
            "12");
  EXPECT_EQ(cached("bench/b"),
            "<configmaps \"bench/b\" not found in the informer's cache>");
  auto all
      = request<std::vector<std::string>>(informer, cache_list_atom::value);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 2u);
  // The watch ends normally: watch again at once, from the bookmark.
  auto before = s->requests.size();
  self->send(s->sink, watch_end_atom::value, s->watch_id, caf::error{});
  drain();
  ASSERT_EQ(s->requests.size(), before + 1);
  EXPECT_EQ(s->requests.back().verb, verb::watch);
  EXPECT_EQ(s->requests.back().resource_version, "14");
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/c"}));
  done("bench/c");
  done("bench/a");
  EXPECT_EQ(log->keys,
            (std::vector<std::string>{"bench/c", "bench/a", "bench/b"}));
}

TEST_F(informer_test, a_broken_watch_resumes_after_a_jittered_backoff) {
  s->list_answers.push_back(list_of({cm("a", "3")}, "10"));
  start();
  events({event("MODIFIED", cm("a", "15"))});
  auto before = s->requests.size();
  self->send(s->sink, watch_end_atom::value, s->watch_id,
             make_error(k8s::errc::transport, "connection reset", status{}));
  drain();
  EXPECT_EQ(s->requests.size(), before);
  advance_time(399ms); // the first wait is drawn from [400 ms, 800 ms)
  EXPECT_EQ(s->requests.size(), before);
  advance_time(401ms);
  ASSERT_EQ(s->requests.size(), before + 1);
  EXPECT_EQ(s->requests.back().verb, verb::watch);
  EXPECT_EQ(s->requests.back().resource_version, "15");
  // Refused watches back off longer each time, up to the cap.
  s->watch_refusals.push_back(
      make_error(k8s::errc::unavailable, "503", status{}));
  s->watch_refusals.push_back(
      make_error(k8s::errc::unavailable, "503", status{}));
  self->send(s->sink, watch_end_atom::value, s->watch_id,
             make_error(k8s::errc::transport, "connection reset", status{}));
  drain();
  advance_time(800ms); // second wait: [800 ms, 1.6 s) -> refused
  advance_time(800ms);
  auto refused_at = s->requests.size();
  EXPECT_EQ(refused_at, before + 2);
  advance_time(1599ms); // third wait: [1.6 s, 3.2 s)
  EXPECT_EQ(s->requests.size(), refused_at);
  advance_time(1601ms);
  EXPECT_EQ(s->requests.size(), refused_at + 1); // refused again
  advance_time(6400ms);
  EXPECT_EQ(s->requests.size(), refused_at + 2); // accepted
  EXPECT_EQ(s->requests.back().resource_version, "15");
}

TEST_F(informer_test,
       an_expired_watch_relists_from_the_latest_and_drops_vanished_objects) {
  s->list_answers.push_back(list_of({cm("a", "3"), cm("b", "4")}, "10"));
  start();
  done("bench/a");
  done("bench/b");
  log->keys.clear();
  auto first_watch = s->watch_id;
  s->list_answers.push_back(list_of({cm("a", "3"), cm("c", "30")}, "40"));
  events({event(
      "ERROR",
      R"js({"kind":"Status","apiVersion":"v1","metadata":{},)js"
      R"js("status":"Failure","message":"too old resource version: 10 (25)",)js"
      R"js("reason":"Expired","code":410})js")});
  EXPECT_EQ(s->unwatched, (std::vector<std::uint64_t>{first_watch}));
  ASSERT_GE(s->requests.size(), 2u);
  const auto& relist = s->requests[s->requests.size() - 2];
  EXPECT_EQ(relist.verb, verb::list);
  EXPECT_EQ(relist.resource_version, ""); // the latest, not "0"
  EXPECT_EQ(s->requests.back().verb, verb::watch);
  EXPECT_EQ(s->requests.back().resource_version, "40");
  // b vanished, c appeared; a did not change and is not queued.
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/c"}));
  done("bench/c");
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/c", "bench/b"}));
  EXPECT_EQ(cached("bench/b"),
            "<configmaps \"bench/b\" not found in the informer's cache>");
}

TEST_F(informer_test, a_410_on_list_or_watch_relists_at_once) {
  s->list_answers.push_back(gone()); // resourceVersion "0" refused
  s->list_answers.push_back(list_of({}, "50"));
  s->list_answers.push_back(list_of({}, "60"));
  s->watch_refusals.push_back(gone());
  start();
  ASSERT_EQ(s->requests.size(), 5u);
  EXPECT_EQ(s->requests[0].resource_version, "0");
  EXPECT_EQ(s->requests[1].resource_version, "");
  EXPECT_EQ(s->requests[2].verb, verb::watch);
  EXPECT_EQ(s->requests[2].resource_version, "50");
  EXPECT_EQ(s->requests[3].verb, verb::list);
  EXPECT_EQ(s->requests[3].resource_version, "");
  EXPECT_EQ(s->requests[4].resource_version, "60");
}

TEST_F(informer_test, a_failed_list_retries_after_backoff) {
  s->list_answers.push_back(
      make_error(k8s::errc::unavailable, "503",
                 status{"ServiceUnavailable", 503, "", {}}));
  s->list_answers.push_back(list_of({cm("a", "3")}, "10"));
  start();
  EXPECT_EQ(s->requests.size(), 1u);
  EXPECT_EQ(request<bool>(informer, synced_atom::value), false);
  advance_time(800ms);
  ASSERT_EQ(s->requests.size(), 3u);
  EXPECT_EQ(s->requests[1].resource_version, "0");
  EXPECT_EQ(request<bool>(informer, synced_atom::value), true);
}

TEST_F(informer_test,
       the_work_queue_dedups_and_never_runs_a_key_twice_at_once) {
  s->list_answers.push_back(list_of({cm("a", "3")}, "10"));
  start();
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/a"}));
  // Changed twice while processed: handed out once more after done.
  events({event("MODIFIED", cm("a", "11")), event("MODIFIED", cm("a", "12"))});
  self->send(informer, enqueue_atom::value, std::string{"bench/a"});
  drain();
  EXPECT_EQ(log->keys.size(), 1u);
  done("bench/a");
  EXPECT_EQ(log->keys.size(), 2u);
  // A failure comes back after 5 ms, then 10 ms.
  done("bench/a", {}, true);
  advance_time(4ms);
  EXPECT_EQ(log->keys.size(), 2u);
  advance_time(1ms);
  EXPECT_EQ(log->keys.size(), 3u);
  done("bench/a", {}, true);
  advance_time(9ms);
  EXPECT_EQ(log->keys.size(), 3u);
  advance_time(1ms);
  EXPECT_EQ(log->keys.size(), 4u);
  // Success resets the back-off; requeue_after asks for a later look.
  done("bench/a", 30s, false);
  advance_time(29s);
  EXPECT_EQ(log->keys.size(), 4u);
  advance_time(1s);
  EXPECT_EQ(log->keys.size(), 5u);
  done("bench/a", {}, true);
  advance_time(5ms);
  EXPECT_EQ(log->keys.size(), 6u);
}

TEST_F(informer_test, resync_requeues_every_cached_key_without_api_calls) {
  s->list_answers.push_back(list_of({cm("a", "3"), cm("b", "4")}, "10"));
  informer_config cfg;
  cfg.resync_period = 10min;
  cfg.workers = 2;
  start(cfg);
  EXPECT_EQ(log->keys, (std::vector<std::string>{"bench/a", "bench/b"}));
  done("bench/a");
  done("bench/b");
  auto api_calls = s->requests.size();
  advance_time(10min);
  EXPECT_EQ(log->keys.size(), 4u);
  EXPECT_EQ(s->requests.size(), api_calls);
}

} // namespace
} // namespace aiperf::k8s::informer
