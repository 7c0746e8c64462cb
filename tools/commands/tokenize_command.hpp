// `aiperf-node tokenize`: counts tokens as `profile` counts ISL, one string
// at a time, so a tokenizer can be checked against any other
// implementation from a shell.
//
//   aiperf-node tokenize --tokenizer T [--tokenizer-revision R] [--ids]
//
// Reads one JSON string per line on stdin and prints one JSON object per
// line on stdout: {"count": N}, with --ids {"count": N, "ids": [...]}. No
// special tokens are added. T is what runtime/tokenizer/resolve.hpp
// resolves (whitespace8, a tokenizer.json, a directory, a Hugging Face
// model id, from the local cache or downloaded into it). Exit 0 when every line was counted; 1 when
// the tokenizer cannot be loaded or a line is not a JSON string (the error
// names the line; the lines before it were printed); 2 for a usage error.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::tokenize_command {

/// Adds the `tokenize` subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::tokenize_command
