#include "tools/commands/user_files.hpp"

#include "k8s/client/config.hpp"
#include "runtime/io/durable_file.hpp"

#include <openssl/sha.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace aiperf::user_files {

namespace fs = std::filesystem;

namespace {

/// The section of run_config.json each option lives in (profile_json.cpp).
const char* section_of(std::string_view option) {
  if (option == "ca_file")
    return "endpoint";
  if (option == "input_file" || option == "tokenizer")
    return "input";
  return nullptr;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (auto b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

struct local_file {
  std::string option;
  std::string flag;
  fs::path path;
};

} // namespace

caf::expected<k8s::json> embed(const config::profile_config& cfg,
                               std::vector<std::string>& warnings) {
  std::vector<local_file> files;
  auto path_option = [&](const std::optional<std::string>& value, const char* option,
                         const char* flag) {
    if (!value || value->empty())
      return;
    std::error_code ec;
    if (fs::is_regular_file(*value, ec))
      files.push_back({option, flag, *value});
    else
      warnings.push_back(std::string{flag} + " " + *value
                         + " does not exist here: taken as a path inside the pods "
                           "(mount it there, e.g. with --secret-mounts)");
  };
  path_option(cfg.input_file, "input_file", "--input-file");
  path_option(cfg.ca_file, "ca_file", "--ca-file");
  {
    std::error_code ec;
    fs::path t{cfg.tokenizer};
    if (!cfg.tokenizer.empty() && fs::is_directory(t, ec)
        && fs::is_regular_file(t / "tokenizer.json", ec))
      files.push_back({"tokenizer", "--tokenizer", t / "tokenizer.json"});
    else if (!cfg.tokenizer.empty() && fs::is_regular_file(t, ec))
      files.push_back({"tokenizer", "--tokenizer", t});
  }
  std::size_t total = 0;
  std::string listing;
  std::vector<std::string> contents;
  for (const auto& f : files) {
    std::ifstream in{f.path, std::ios::binary};
    if (!in)
      return make_error(config::errc::invalid,
                        f.flag + " " + f.path.string() + ": cannot be read");
    std::stringstream buf;
    buf << in.rdbuf();
    contents.push_back(buf.str());
    total += contents.back().size();
    listing += (listing.empty() ? "" : ", ") + f.flag + " " + f.path.string() + " ("
               + std::to_string(contents.back().size()) + " bytes)";
  }
  if (total > max_total_bytes)
    return make_error(config::errc::invalid,
                      "the local files of this run make " + std::to_string(total)
                        + " bytes, above the " + std::to_string(max_total_bytes)
                        + " bytes that travel in run_config.json: " + listing
                        + "; mount them into the pods (--secret-mounts, or podTemplate "
                          "volumes) and pass the in-pod path, or pass a URL the "
                          "controller can read");
  auto out = k8s::json::array();
  for (std::size_t i = 0; i < files.size(); ++i)
    out.push_back({{"option", files[i].option},
                   {"name", files[i].path.filename().string()},
                   {"size", contents[i].size()},
                   {"sha256", sha256_hex(contents[i])},
                   {"content_base64", k8s::client::base64_encode(contents[i])}});
  return out;
}

caf::expected<void> materialize(const k8s::json& user_files, const fs::path& dir,
                                k8s::json& run_json) {
  auto bad = [](std::string msg) {
    return make_error(config::errc::invalid,
                      "run_config.json artifacts.user_files: " + std::move(msg));
  };
  if (!user_files.is_array())
    return bad("must be a list");
  for (std::size_t i = 0; i < user_files.size(); ++i) {
    const auto& e = user_files[i];
    auto at = "entry " + std::to_string(i);
    if (!e.is_object())
      return bad(at + " is not an object");
    auto option = e.value("option", "");
    auto name = e.value("name", "");
    const char* section = section_of(option);
    if (section == nullptr)
      return bad(at + ": option '" + option
                 + "' is none of input_file, ca_file, tokenizer");
    // A plain file name: nothing may land outside its folder.
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos
        || name.find('\\') != std::string::npos || name.find('\0') != std::string::npos)
      return bad(at + " (" + option + "): name '" + name
                 + "' is not a plain file name; regenerate the run with aiperf-node kube");
    auto data = k8s::client::base64_decode(e.value("content_base64", ""));
    if (!data)
      return bad(at + " (" + option + " " + name + "): content_base64 is not base64");
    auto want = e.value("sha256", "");
    auto got = sha256_hex(*data);
    if (got != want)
      return bad(at + " (" + option + " " + name + "): sha256 " + got
                 + " does not match the recorded " + want
                 + "; the ConfigMap was altered: regenerate the run");
    auto folder = dir / option;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
      return bad("cannot create " + folder.string() + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
    auto path = folder / name;
    if (auto done = io::atomic_write_file(path, *data); !done)
      return bad(error_message(done.error()));
    if (::chmod(path.c_str(), 0600) != 0)
      return bad("cannot make " + path.string() + " mode 0600");
    if (!run_json.contains(section) || !run_json[section].is_object())
      run_json[section] = k8s::json::object();
    run_json[section][option] = path.string();
  }
  return caf::unit;
}

} // namespace aiperf::user_files
