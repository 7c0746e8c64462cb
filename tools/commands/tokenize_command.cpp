#include "tools/commands/tokenize_command.hpp"

#include "runtime/tokenizer/resolve.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace aiperf::tokenize_command {

namespace {

struct options {
  std::string tokenizer;
  std::string revision = "main";
  bool ids = false;
};

int run(const options& opt) {
  auto tok = tokenizer::any_tokenizer::load(opt.tokenizer, opt.revision);
  if (!tok) {
    std::fprintf(stderr, "error: %s\n", error_message(tok.error()).c_str());
    return 1;
  }
  if (opt.ids && !tok->encode("").has_value()) {
    std::fprintf(stderr,
                 "error: --ids: the %s token model has no token IDs; "
                 "drop --ids or pass a tokenizer.json\n",
                 tok->origin().c_str());
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string line, out;
  for (std::size_t n = 1; std::getline(std::cin, line); ++n) {
    std::string text;
    try {
      auto j = nlohmann::json::parse(line);
      if (!j.is_string())
        throw std::runtime_error("a JSON " + std::string{j.type_name()});
      text = j.get<std::string>();
    } catch (const std::exception& e) {
      std::cout.flush();
      std::fprintf(stderr,
                   "error: stdin line %zu: expected one JSON string per line "
                   "(e.g. \"Hello world\"), got %s\n",
                   n, e.what());
      return 1;
    }
    out.clear();
    if (opt.ids) {
      auto ids = *tok->encode(text);
      out = "{\"count\": " + std::to_string(ids.size()) + ", \"ids\": [";
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i != 0)
          out += ", ";
        out += std::to_string(ids[i]);
      }
      out += "]}\n";
    } else {
      out = "{\"count\": " + std::to_string(tok->count(text)) + "}\n";
    }
    std::cout << out;
  }
  std::cout.flush();
  return 0;
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<options>();
  auto* sub = app.add_subcommand(
      "tokenize",
      "Count the tokens of JSON strings read one per line on stdin");
  sub->add_option("--tokenizer", opt->tokenizer,
                  "whitespace8, a tokenizer.json, a directory holding one, or "
                  "a Hugging Face model id (local cache, else downloaded)")
      ->required();
  sub->add_option("--tokenizer-revision", opt->revision,
                  "The model revision (branch, tag or commit) in the cache")
      ->capture_default_str();
  sub->add_flag("--ids", opt->ids, "Print the token IDs too");
  sub->callback([opt, &exit_code] { exit_code = run(*opt); });
}

} // namespace aiperf::tokenize_command
