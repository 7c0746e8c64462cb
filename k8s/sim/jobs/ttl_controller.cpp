// The TTL-after-finished controller for Jobs (kubernetes
// pkg/controller/ttlafterfinished/ttlafterfinished_controller.go): a Job
// that finished (Complete or Failed True) and sets ttlSecondsAfterFinished
// is deleted that long after the finishing condition's lastTransitionTime.
// Before deleting it reads the Job afresh from the API server, as upstream
// does, so a TTL changed meanwhile is honoured; the delete is Foreground
// with the uid as precondition.
#include "k8s/sim/jobs/engine.hpp"
#include "k8s/sim/jobs/jobs.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

namespace aiperf::k8s::sim {

namespace {

using namespace jobs_detail;

resource_ref jobs_ref(const std::string& ns = {},
                      const std::string& name = {}) {
  return {"batch", "v1", "jobs", ns, name, ""};
}

// Seconds until `job` expires (<= 0: expired), or nullopt when it has no
// TTL, has not finished or is being deleted.
std::optional<std::int64_t> time_left(const json& job, std::int64_t now) {
  if (being_deleted(job) || !has(obj(job, "spec"), "ttlSecondsAfterFinished"))
    return std::nullopt;
  const json* c = nullptr;
  for (const char* type : {"Complete", "Failed"})
    if (condition_true(job, type))
      c = condition(job, type);
  if (c == nullptr)
    return std::nullopt;
  auto finished = engine::unix_of(str(*c, "lastTransitionTime"));
  if (!finished)
    return std::nullopt;
  return *finished + num(obj(job, "spec"), "ttlSecondsAfterFinished") - now;
}

struct ttl_controller {
  engine* eng = nullptr;

  void reconcile(const std::string& key, const pass_ptr& p) {
    const json* found = eng->find(0, key);
    if (found == nullptr)
      return;
    auto left = time_left(*found, eng->now_unix());
    if (!left)
      return;
    if (*left > 0) {
      p->again_after(std::chrono::seconds{*left});
      return;
    }
    auto ns = namespace_of(*found);
    auto name = name_of(*found);
    auto uid = uid_of(*found);
    eng->write(p, make_request(verb::get, jobs_ref(ns, name)), 0,
               [this, p, ns, name, uid](const json& fresh) {
                 auto again = time_left(fresh, eng->now_unix());
                 if (!again || uid_of(fresh) != uid)
                   return;
                 if (*again > 0) {
                   p->again_after(std::chrono::seconds{*again});
                   return;
                 }
                 eng->write(
                     p, delete_request(jobs_ref(ns, name), uid, "Foreground"),
                     0);
               });
  }
};

jobs_controller_actor::behavior_type ttl_impl(stateful_ptr self, api_actor api,
                                              jobs_config cfg) {
  auto ctl = std::make_shared<ttl_controller>();
  self->state.eng = std::make_unique<engine>(
      self, std::move(api), cfg, std::vector<resource_ref>{jobs_ref()},
      [](std::size_t, const json& o) {
        return std::vector<std::string>{key_of(o)};
      },
      [ctl](const std::string& key, const pass_ptr& p) {
        ctl->reconcile(key, p);
      },
      "ttl-after-finished-controller");
  ctl->eng = self->state.eng.get();
  self->state.eng->start();
  return self->state.eng->behavior();
}

} // namespace

jobs_controller_actor
spawn_ttl_after_finished_controller(caf::actor_system& sys, api_actor api,
                                    jobs_config cfg) {
  return sys.spawn(ttl_impl, std::move(api), cfg);
}

} // namespace aiperf::k8s::sim
