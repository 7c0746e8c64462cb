// `aiperf-node kube crd [--output-dir DIR] [--check]`: writes the AIPerfJob
// and AIPerfSweep CRDs (k8s/crds) as the files committed under
// k8s/deploy/crds/, or, with --check, compares the committed files with what
// the generator writes now and prints a unified diff. The files are bytes of
// the generator only, so CI runs --check and fails when the spec model
// changed and the files were not regenerated.
//
// Exit codes: 0 written / identical; 1 --check found a difference or a
// missing file, or a write failed; 2 usage (DIR is not a directory).
#include "tools/commands/kube_command.hpp"

#include "k8s/crds/crds.hpp"
#include "runtime/io/durable_file.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::kube_command {

namespace {

namespace fs = std::filesystem;

constexpr int exit_differs = 1;
constexpr int exit_usage = 2;

struct crd_options {
  std::string output_dir = "k8s/deploy/crds";
  bool check = false;
};

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      out.push_back(text);
      break;
    }
    out.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return out;
}

enum class op : std::uint8_t { keep, remove, add };

struct edit {
  op kind;
  std::string_view line;
};

// The edit script from `a` to `b`: common prefix and suffix kept, the middle
// by a longest common subsequence when it is small enough to tabulate, else
// as one removal and one addition (still a valid diff, only longer). The
// files are generated, so a drift is usually a few lines in one place.
std::vector<edit> edits(const std::vector<std::string_view>& a,
                        const std::vector<std::string_view>& b) {
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre])
    ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre
         && a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  std::vector<edit> out;
  for (std::size_t i = 0; i < pre; ++i)
    out.push_back({op::keep, a[i]});
  const std::size_t n = a.size() - pre - suf;
  const std::size_t m = b.size() - pre - suf;
  constexpr std::size_t max_cells = std::size_t{1} << 22; // 16 MiB of counts
  if (n != 0 && m != 0 && (n + 1) * (m + 1) <= max_cells) {
    // lcs[i][j]: the LCS length of a[pre+i..] and b[pre+j..].
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& {
      return lcs[i * (m + 1) + j];
    };
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        at(i, j) = a[pre + i] == b[pre + j]
                       ? at(i + 1, j + 1) + 1
                       : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[pre + i] == b[pre + j]) {
        out.push_back({op::keep, a[pre + i]});
        ++i, ++j;
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        // Removals first, as diff -u prints them.
        out.push_back({op::remove, a[pre + i]});
        ++i;
      } else {
        out.push_back({op::add, b[pre + j]});
        ++j;
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i)
      out.push_back({op::remove, a[pre + i]});
    for (std::size_t j = 0; j < m; ++j)
      out.push_back({op::add, b[pre + j]});
  }
  for (std::size_t i = a.size() - suf; i < a.size(); ++i)
    out.push_back({op::keep, a[i]});
  return out;
}

std::string range(std::size_t start, std::size_t count) {
  // diff -u: an empty range names the line before it.
  if (count == 0)
    return std::to_string(start == 0 ? 0 : start - 1) + ",0";
  if (count == 1)
    return std::to_string(start);
  return std::to_string(start) + "," + std::to_string(count);
}

// `diff -u` of two texts (3 lines of context); "" when they are equal.
std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         const std::string& old_name,
                         const std::string& new_name) {
  if (old_text == new_text)
    return {};
  auto a = split_lines(old_text);
  auto b = split_lines(new_text);
  auto script = edits(a, b);
  constexpr std::size_t context = 3;
  std::string out = "--- " + old_name + "\n+++ " + new_name + "\n";
  std::size_t k = 0;
  // Line numbers (1-based) in a and b of script[k].
  std::vector<std::size_t> a_line(script.size() + 1), b_line(script.size() + 1);
  {
    std::size_t ai = 1, bi = 1;
    for (std::size_t e = 0; e < script.size(); ++e) {
      a_line[e] = ai;
      b_line[e] = bi;
      if (script[e].kind != op::add)
        ++ai;
      if (script[e].kind != op::remove)
        ++bi;
    }
    a_line[script.size()] = ai;
    b_line[script.size()] = bi;
  }
  while (k < script.size()) {
    while (k < script.size() && script[k].kind == op::keep)
      ++k;
    if (k == script.size())
      break;
    std::size_t begin = k >= context ? k - context : 0;
    // Extend the hunk while the next change is within 2*context lines.
    std::size_t end = k;
    for (;;) {
      while (end < script.size() && script[end].kind != op::keep)
        ++end;
      std::size_t gap = end;
      while (gap < script.size() && script[gap].kind == op::keep
             && gap - end < 2 * context)
        ++gap;
      if (gap < script.size() && script[gap].kind != op::keep) {
        end = gap;
        continue;
      }
      end = std::min(end + context, script.size());
      break;
    }
    std::size_t a_count = 0, b_count = 0;
    for (std::size_t e = begin; e < end; ++e) {
      a_count += script[e].kind != op::add;
      b_count += script[e].kind != op::remove;
    }
    out += "@@ -" + range(a_line[begin], a_count) + " +"
           + range(b_line[begin], b_count) + " @@\n";
    for (std::size_t e = begin; e < end; ++e) {
      out += script[e].kind == op::keep ? ' '
             : script[e].kind == op::add ? '+'
                                         : '-';
      out += script[e].line;
      out += '\n';
    }
    k = end;
  }
  if (out.find("\n@@ ") == std::string::npos)
    out += "(the files differ only in the newline at their end)\n";
  return out;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run_crd(const crd_options& opt) {
  const fs::path dir{opt.output_dir};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr,
                 "error: --output-dir %s: not a directory; run from the "
                 "repository root (the default is k8s/deploy/crds) or pass "
                 "--output-dir DIR\n",
                 opt.output_dir.c_str());
    return exit_usage;
  }
  auto files = k8s::crds::crd_files();
  if (!opt.check) {
    for (const auto& f : files) {
      auto path = dir / f.name;
      if (auto ok = io::atomic_write_file(path, f.text); !ok) {
        std::fprintf(stderr, "error: %s\n", error_message(ok.error()).c_str());
        return exit_differs;
      }
      std::printf("wrote %s\n", path.string().c_str());
    }
    return 0;
  }
  int code = 0;
  for (const auto& f : files) {
    auto path = (dir / f.name).string();
    auto committed = read_file(dir / f.name);
    if (!committed) {
      std::printf("%s", unified_diff({}, f.text, "/dev/null", path).c_str());
      std::fprintf(stderr, "%s: missing\n", path.c_str());
      code = exit_differs;
      continue;
    }
    auto diff = unified_diff(*committed, f.text, path, path + " (generated)");
    if (!diff.empty()) {
      std::printf("%s", diff.c_str());
      std::fprintf(stderr, "%s: differs from the generator\n", path.c_str());
      code = exit_differs;
    }
  }
  if (code != 0)
    std::fprintf(stderr,
                 "error: the CRD files are stale: regenerate them with "
                 "`aiperf-node kube crd --output-dir %s` and commit them\n",
                 opt.output_dir.c_str());
  else
    std::printf("%s: up to date\n", opt.output_dir.c_str());
  std::fflush(stdout);
  return code;
}

} // namespace

void add_crd(CLI::App& kube, int& exit_code) {
  auto opt = std::make_shared<crd_options>();
  auto* cmd = kube.add_subcommand(
      "crd",
      "Write the AIPerfJob and AIPerfSweep CustomResourceDefinitions "
      "(aiperfjobs.aiperf.nvidia.com.yaml, aiperfsweeps.aiperf.nvidia.com.yaml) "
      "generated from the spec model; --check compares instead");
  cmd->add_option("--output-dir", opt->output_dir,
                  "Directory of the two files; default k8s/deploy/crds "
                  "relative to the current directory (it must exist)");
  cmd->add_flag("--check", opt->check,
                "Write nothing: print a unified diff and exit 1 when a file "
                "in the directory differs from the generator or is missing, "
                "0 when both are identical");
  cmd->callback([opt, &exit_code] { exit_code = run_crd(*opt); });
}

} // namespace aiperf::kube_command
