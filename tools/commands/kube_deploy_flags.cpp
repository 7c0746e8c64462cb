#include "tools/commands/kube_deploy_flags.hpp"

#include "config/benchmark/mapping.hpp"
#include "config/profile/profile_cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <set>

namespace aiperf::kube_command {

namespace mf = k8s::manifests;

namespace {

constexpr std::string_view three_spellings
    = "use --x.KEY VALUE, --x KEY=VALUE or --x '{\"KEY\":\"VALUE\"}'";

caf::error usage(std::string_view flag, std::string message) {
  return config::flag_error(config::errc::invalid, flag, message);
}

std::string spellings_for(std::string_view flag) {
  std::string out{three_spellings};
  std::string x{flag};
  for (std::size_t at = 0; (at = out.find("--x", at)) != std::string::npos; at += x.size())
    out.replace(at, 3, x);
  return out;
}

// The JSON scalars a map value may be: AIPerf's models coerce them to str.
std::optional<std::string> scalar_text(const k8s::json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number())
    return v.dump();
  return std::nullopt;
}

void put(mf::string_pairs& out, std::string key, std::string value) {
  auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
  if (it != out.end())
    it->second = std::move(value);
  else
    out.emplace_back(std::move(key), std::move(value));
}

caf::expected<k8s::json> parse_json_value(std::string_view flag, const std::string& text) {
  try {
    return k8s::json::parse(text);
  } catch (const std::exception& e) {
    return usage(flag, "'" + text + "' is not valid JSON (" + e.what() + ")");
  }
}

// Each value: one object or an array of objects; all values accumulate.
caf::expected<std::vector<k8s::json>> json_objects(std::string_view flag,
                                                   const std::vector<std::string>& values,
                                                   std::string_view shape) {
  std::vector<k8s::json> out;
  for (const auto& text : values) {
    auto parsed = parse_json_value(flag, text);
    if (!parsed)
      return parsed.error();
    auto bad = [&] {
      return usage(flag, "'" + text + "': expected a JSON object " + std::string{shape}
                             + " or an array of them");
    };
    if (parsed->is_object()) {
      out.push_back(std::move(*parsed));
    } else if (parsed->is_array()) {
      for (auto& item : *parsed) {
        if (!item.is_object())
          return bad();
        out.push_back(std::move(item));
      }
    } else {
      return bad();
    }
  }
  return out;
}

caf::expected<std::vector<mf::secret_mount>>
parse_secret_mounts(const std::vector<std::string>& values) {
  const std::string_view flag = "--secret-mounts";
  auto objects = json_objects(flag, values, "{\"name\", \"mount_path\", \"sub_path\"?}");
  if (!objects)
    return objects.error();
  std::vector<mf::secret_mount> out;
  for (const auto& obj : *objects) {
    mf::secret_mount m;
    for (const auto& [key, value] : obj.items()) {
      if (!value.is_string())
        return usage(flag, obj.dump() + ": '" + key + "' must be a string");
      auto text = value.get<std::string>();
      if (key == "name")
        m.name = text;
      else if (key == "mount_path" || key == "mountPath")
        m.mount_path = text;
      else if (key == "sub_path" || key == "subPath")
        m.sub_path = text;
      else
        return usage(flag, obj.dump() + ": unknown key '" + key
                               + "'; the keys are name, mount_path and sub_path");
    }
    if (m.name.empty() || m.mount_path.empty())
      return usage(flag, obj.dump() + ": needs \"name\" (the Secret) and \"mount_path\", e.g. "
                             "'{\"name\":\"hf-token\",\"mount_path\":\"/secrets/hf\"}'");
    out.push_back(std::move(m));
  }
  return out;
}

caf::expected<std::vector<std::pair<std::string, mf::secret_key_ref>>>
parse_env_from_secrets(const std::vector<std::string>& values) {
  const std::string_view flag = "--env-from-secrets";
  auto pairs = parse_mapping(flag, values);
  if (!pairs)
    return pairs.error();
  std::vector<std::pair<std::string, mf::secret_key_ref>> out;
  for (auto& [env, ref] : *pairs) {
    auto slash = ref.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == ref.size())
      return usage(flag, env + "=" + ref
                             + ": the value must be <secret>/<key> (it must contain '/'), "
                               "e.g. --env-from-secrets.OPENAI_API_KEY llm-api-key/api-key");
    out.push_back({env, {ref.substr(0, slash), ref.substr(slash + 1)}});
  }
  return out;
}

std::string slug(std::string_view text) {
  std::string out;
  bool dash = false;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      if (dash && !out.empty())
        out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(c));
    } else {
      dash = true;
    }
  }
  return out;
}

std::string phase_type(const config::profile_config& run) {
  if (run.fixed_schedule)
    return "fixed-schedule";
  if (run.user_centric_rate)
    return "user-centric";
  if (run.request_rate)
    return std::string{config::to_string(run.arrival_pattern)};
  return "concurrency";
}

bool has_user_info(std::string_view url) {
  return mf::redact_url(url) != url;
}

bool is_credential_header(std::string name) {
  for (auto& c : name)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> names{"authorization", "proxy-authorization", "x-api-key",
                                           "api-key", "cookie"};
  return names.count(name) > 0;
}

} // namespace

const std::vector<std::string>& mapping_flags() {
  static const std::vector<std::string> flags{"--env-vars", "--labels", "--annotations",
                                              "--env-from-secrets", "--node-selector"};
  return flags;
}

caf::expected<std::vector<std::string>>
normalize_mapping_flag_tokens(std::vector<std::string> args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& token = args[i];
    if (token == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::string* flag = nullptr;
    for (const auto& f : mapping_flags())
      if (token.size() > f.size() && token.compare(0, f.size(), f) == 0 && token[f.size()] == '.')
        flag = &f;
    if (!flag) {
      out.push_back(token);
      continue;
    }
    auto rest = token.substr(flag->size() + 1);
    auto eq = rest.find('=');
    auto key = rest.substr(0, eq);
    if (key.empty())
      return usage(*flag, "'" + token + "' names no key; " + spellings_for(*flag));
    std::string value;
    if (eq != std::string::npos) {
      value = rest.substr(eq + 1);
    } else {
      if (i + 1 == args.size() || args[i + 1].starts_with("--"))
        return usage(*flag, "'" + token + "' needs a value; " + spellings_for(*flag));
      value = args[++i];
    }
    out.push_back(*flag);
    out.push_back(key + "=" + value);
  }
  return out;
}

caf::expected<mf::string_pairs> parse_mapping(std::string_view flag,
                                              const std::vector<std::string>& values) {
  mf::string_pairs out;
  for (const auto& text : values) {
    auto first = text.find_first_not_of(" \t\n");
    if (first != std::string::npos && text[first] == '{') {
      auto parsed = parse_json_value(flag, text);
      if (!parsed)
        return parsed.error();
      if (!parsed->is_object())
        return usage(flag, "'" + text + "' is not a JSON object; " + spellings_for(flag));
      for (const auto& [key, value] : parsed->items()) {
        auto v = scalar_text(value);
        if (key.empty() || !v)
          return usage(flag, "'" + text + "': every key needs a string value; "
                                 + spellings_for(flag));
        put(out, key, *v);
      }
      continue;
    }
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      return usage(flag, "'" + text + "' is not KEY=VALUE; " + spellings_for(flag));
    put(out, text.substr(0, eq), text.substr(eq + 1));
  }
  return out;
}

void add_deploy_flags(CLI::App& cmd, deploy_flags& f) {
  const std::string g = "Kubernetes deployment";
  cmd.add_option("--name", f.name,
                 "Job name: a DNS label of at most 35 characters; default "
                 "<model>-<endpoint-type>-<phase-type>")
      ->group(g);
  cmd.add_option("--image", f.image,
                 "Container image of every pod; default " + std::string{mf::default_image})
      ->group(g);
  cmd.add_option("--image-pull-policy", f.image_pull_policy,
                 "Always, IfNotPresent or Never; default: the cluster's")
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}))
      ->group(g);
  cmd.add_option_function<int>(
         "--total-workers", [&f](const int& v) { f.total_workers = v; },
         "Workers in total (packed --workers-per-pod per pod); default 10")
      ->check(CLI::PositiveNumber)
      ->group(g);
  cmd.add_option_function<std::int64_t>(
         "--ttl-seconds", [&f](const std::int64_t& v) { f.ttl_seconds = v; },
         "Seconds the finished JobSet stays; default 28800 (direct), 300 (operator)")
      ->check(CLI::NonNegativeNumber)
      ->group(g);
  cmd.add_option("--node-selector", f.node_selector,
                 "Pod node selector (KEY=VALUE, --node-selector.KEY VALUE or JSON); "
                 "repeatable")
      ->take_all()
      ->group(g);
  cmd.add_option("--tolerations", f.tolerations,
                 "Pod tolerations: a JSON Toleration object or array; repeatable")
      ->take_all()
      ->group(g);
  cmd.add_option("--image-pull-secrets", f.image_pull_secrets,
                 "Secrets to pull the image with; repeatable")
      ->take_all()
      ->group(g);
  cmd.add_option("--secret-mounts", f.secret_mounts,
                 "Secrets mounted read-only: JSON {\"name\",\"mount_path\",\"sub_path\"?} "
                 "object or array; repeatable")
      ->take_all()
      ->group(g);
  cmd.add_option("--service-account", f.service_account,
                 "Service account of the pods; default the namespace's default")
      ->group(g);
  cmd.add_option("--queue-name", f.queue_name, "Kueue LocalQueue (the JobSet starts suspended)")
      ->group(g);
  cmd.add_option("--priority-class", f.priority_class, "Kueue WorkloadPriorityClass")->group(g);
  cmd.add_flag("--skip-endpoint-check", f.skip_endpoint_check,
               "Skip the endpoint health probe (no-op in direct mode)")
      ->group(g);
  const std::string how = " (--x.KEY VALUE, --x KEY=VALUE or JSON object); repeatable";
  auto mapping = [&](const std::string& name, std::vector<std::string>& into,
                     const std::string& help) {
    auto text = how;
    text.replace(text.find("--x"), 3, name);
    text.replace(text.find("--x"), 3, name);
    cmd.add_option(name, into, help + text)->take_all()->group(g);
  };
  mapping("--env-vars", f.env_vars, "Environment variables of the pods");
  mapping("--labels", f.labels, "Labels added to the pods");
  mapping("--annotations", f.annotations, "Annotations added to the pods");
  mapping("--env-from-secrets", f.env_from_secrets,
          "Environment variables from Secrets, values <secret>/<key>");
}

std::string default_job_name(const config::profile_config& run) {
  std::string model = run.model_names.empty() ? "aiperf" : run.model_names.front();
  auto name = slug(model + "-" + std::string{config::to_string(run.endpoint_type)} + "-"
                   + phase_type(run));
  if (name.size() > mf::max_name_length)
    name.resize(mf::max_name_length);
  while (!name.empty() && name.back() == '-')
    name.pop_back();
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front())))
    name = ("j" + name).substr(0, mf::max_name_length);
  return name;
}

caf::expected<mf::deployment> to_deployment(const deploy_flags& f,
                                            const config::profile_config& run, std::string ns) {
  mf::deployment d;
  d.name = f.name.empty() ? default_job_name(run) : f.name;
  d.ns = std::move(ns);
  if (!f.image.empty())
    d.image = f.image;
  if (!f.image_pull_policy.empty())
    d.image_pull_policy = f.image_pull_policy;
  if (f.total_workers)
    d.total_workers = f.total_workers;
  else if (run.workers_max)
    d.total_workers = run.workers_max;
  if (run.workers_per_pod)
    d.workers_per_pod = *run.workers_per_pod;
  d.ttl_seconds_after_finished = f.ttl_seconds;
  auto selector = parse_mapping("--node-selector", f.node_selector);
  if (!selector)
    return selector.error();
  d.node_selector = std::move(*selector);
  auto tolerations = json_objects("--tolerations", f.tolerations, "(a Toleration)");
  if (!tolerations)
    return tolerations.error();
  d.tolerations = k8s::json::array();
  for (auto& t : *tolerations)
    d.tolerations.push_back(std::move(t));
  for (const auto& s : f.image_pull_secrets)
    if (std::find(d.image_pull_secrets.begin(), d.image_pull_secrets.end(), s)
        == d.image_pull_secrets.end())
      d.image_pull_secrets.push_back(s);
  auto mounts = parse_secret_mounts(f.secret_mounts);
  if (!mounts)
    return mounts.error();
  d.secret_mounts = std::move(*mounts);
  if (!f.service_account.empty())
    d.service_account_name = f.service_account;
  if (!f.queue_name.empty())
    d.queue_name = f.queue_name;
  if (!f.priority_class.empty())
    d.priority_class = f.priority_class;
  for (auto [flag, from, into] :
       {std::tuple{"--env-vars", &f.env_vars, &d.env},
        std::tuple{"--labels", &f.labels, &d.labels},
        std::tuple{"--annotations", &f.annotations, &d.annotations}}) {
    auto pairs = parse_mapping(flag, *from);
    if (!pairs)
      return pairs.error();
    *into = std::move(*pairs);
  }
  auto from_secrets = parse_env_from_secrets(f.env_from_secrets);
  if (!from_secrets)
    return from_secrets.error();
  d.env_from_secrets = std::move(*from_secrets);
  if (auto ok = mf::validate(d); !ok)
    return ok.error();
  return d;
}

caf::expected<void> apply_secret_rule(const config::profile_config& run, mf::deployment& d) {
  auto mapped = [&](std::initializer_list<std::string_view> names) {
    return std::any_of(d.env_from_secrets.begin(), d.env_from_secrets.end(), [&](const auto& e) {
      return std::find(names.begin(), names.end(), e.first) != names.end();
    });
  };
  if (run.api_key && !mapped({"OPENAI_API_KEY", "AIPERF_INJECTED_API_KEY"}))
    return config::flag_error(
        config::errc::missing, "",
        "--api-key cannot be stored in the ConfigMap: create a Secret (kubectl create secret "
        "generic llm-api-key --from-literal=api-key=…) and pass "
        "--env-from-secrets.OPENAI_API_KEY llm-api-key/api-key");
  bool headers_mapped = mapped({"AIPERF_INJECTED_HEADERS"});
  for (const auto& h : run.headers)
    if (is_credential_header(h.name) && !headers_mapped)
      return config::flag_error(
          config::errc::missing, "",
          "--header " + h.name
              + " cannot be stored in the ConfigMap: create a Secret holding every header as "
                "a JSON object (kubectl create secret generic llm-headers "
                "--from-literal=headers='{\""
              + h.name + "\":\"…\"}') and pass --env-from-secrets.AIPERF_INJECTED_HEADERS "
                         "llm-headers/headers");
  for (const auto& u : run.urls)
    if (has_user_info(u) && !mapped({"AIPERF_INJECTED_ENDPOINT_URLS"}))
      return config::flag_error(
          config::errc::missing, "",
          "--url " + mf::redact_url(u)
              + ": a URL with user-info cannot be stored in the ConfigMap: create a Secret "
                "holding the URL list as JSON (kubectl create secret generic llm-endpoint "
                "--from-literal=urls='[\"…\"]') and pass "
                "--env-from-secrets.AIPERF_INJECTED_ENDPOINT_URLS llm-endpoint/urls");
  if (!run.headers.empty() && !headers_mapped) {
    k8s::json headers = k8s::json::object();
    for (const auto& h : run.headers)
      headers[h.name] = h.value;
    d.env.emplace_back("AIPERF_INJECTED_HEADERS", headers.dump());
  }
  return {};
}

void add_benchmark_flags(CLI::App& cmd, benchmark_flags& flags) {
  config::add_profile_options(cmd, flags.run);
  flags.config_option
      = cmd.add_option("-f,--config", flags.config_file,
                       "AIPerf Config-v2 file (YAML or JSON); flags given on the command "
                       "line override its values")
            ->type_name("FILE")
            ->group("Config File");
}

caf::expected<std::vector<std::string>> resolve_benchmark(CLI::App& cmd,
                                                          benchmark_flags& flags) {
  std::vector<std::string> warnings;
  if (!flags.config_file.empty()) {
    auto loaded = config::benchmark::apply_file_then_flags(flags.config_file, cmd, flags.run,
                                                           flags.config_option);
    if (!loaded)
      return loaded.error();
    warnings = std::move(*loaded);
  }
  auto typed = config::benchmark::with_cli_text_parsed(flags.run);
  if (!typed)
    return typed.error();
  flags.typed = std::move(*typed);
  if (flags.run.urls.empty())
    return config::flag_error(config::errc::missing, "--url",
                              "required: the pods benchmark a server they can reach, e.g. "
                              "--url http://my-server:8000 (or endpoint.urls in -f FILE)");
  // A file that is not on this machine is a path inside the pods (mounted
  // with --secret-mounts or podTemplate volumes): it is not read here, and
  // the pods read it (user_files::embed warns about it).
  auto here = [](const std::optional<std::string>& path) {
    std::error_code ec;
    return !path || path->empty() || std::filesystem::exists(*path, ec);
  };
  config::file_site site{here(flags.run.input_file), here(flags.run.ca_file)};
  if (auto done = config::finalize(flags.run, site); !done)
    return done.error();
  return warnings;
}

std::string namespace_of(const std::string& explicit_ns,
                         const k8s::client::config_selection& sel,
                         const k8s::client::environment& env, std::string* warning) {
  if (!explicit_ns.empty())
    return explicit_ns;
  auto loaded = k8s::client::load_config(sel, env);
  if (loaded && !loaded->namespace_name.empty())
    return loaded->namespace_name;
  if (!loaded && warning && (!sel.kubeconfig.empty() || !sel.context.empty()))
    *warning = error_message(loaded.error()) + "; using namespace default (pass -n to choose)";
  return "default";
}

CLI::App* add_normalised_command(CLI::App& parent, const std::string& name,
                                 const std::string& description,
                                 std::function<command_body(CLI::App& cmd)> define,
                                 int& exit_code) {
  auto* sub = parent.add_subcommand(name, description);
  // Every argument goes through untouched (no flags, no help flag of its
  // own), in order, so the normaliser sees what the user typed.
  sub->set_help_flag();
  sub->prefix_command();
  auto full_name = parent.get_name() + " " + name;
  for (auto* p = parent.get_parent(); p; p = p->get_parent())
    full_name = (p->get_name().empty() ? std::string{"aiperf-node"} : p->get_name()) + " "
                + full_name;
  sub->callback([sub, full_name, description, define, &exit_code] {
    auto normalised = normalize_mapping_flag_tokens(sub->remaining());
    if (!normalised) {
      std::fprintf(stderr, "error: %s\n", error_message(normalised.error()).c_str());
      exit_code = 2;
      return;
    }
    CLI::App cmd{description, full_name};
    cmd.failure_message([](const CLI::App* a, const CLI::Error& e) {
      return "error: " + CLI::FailureMessage::simple(a, e);
    });
    auto body = define(cmd);
    try {
      // CLI11 takes the arguments last to first.
      std::vector<std::string> reversed(normalised->rbegin(), normalised->rend());
      cmd.parse(reversed);
    } catch (const CLI::ParseError& e) {
      exit_code = cmd.exit(e) == 0 ? 0 : 2;
      return;
    }
    try {
      exit_code = body(cmd);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = 1;
    }
  });
  return sub;
}

} // namespace aiperf::kube_command
