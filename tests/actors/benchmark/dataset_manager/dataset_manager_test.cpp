#include "actors/benchmark/dataset_manager/dataset_manager.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace aiperf;
using namespace aiperf::dataset_manager;
namespace fs = std::filesystem;

namespace {

dataset_config synthetic_config() {
  dataset_config cfg;
  cfg.synthetic.num_conversations = 12;
  cfg.synthetic.isl_mean = 6;
  cfg.synthetic.osl_mean = 3;
  cfg.synthetic.turn_mean = 2;
  cfg.synthetic.turn_stddev = 1;
  cfg.synthetic.random_seed = 5;
  cfg.sampling_seed = 5;
  cfg.payload.model = std::string{"a"};
  return cfg;
}

std::vector<std::string> turn_models(const dataset::dataset& ds) {
  std::vector<std::string> out;
  for (const auto& conv : ds.conversations)
    for (const auto& t : conv.turns)
      out.push_back(t.model);
  return out;
}

const dataset_ready& ready(const caf::expected<dataset_ready>& v) {
  static const dataset_ready none{
    std::make_shared<const dataset::dataset>(), {}};
  if (!v) {
    ADD_FAILURE() << error_message(v.error());
    return none;
  }
  return *v;
}

std::string read_all(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class scratch_dir {
public:
  scratch_dir() {
    path_ = fs::temp_directory_path()
            / ("aiperf_dataset_manager_test." + std::to_string(::getpid()) + "."
               + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

} // namespace

// Models are assigned over the final (shuffled) session order, so round_robin
// alternates in the order sessions are started, across multi-turn sessions.
TEST(dataset_manager_build, round_robin_models_follow_the_session_order) {
  auto cfg = synthetic_config();
  cfg.models.names = {"a", "b", "c"};
  auto built = build(cfg);
  const auto& r = ready(built);
  auto models = turn_models(*r.data);
  ASSERT_GT(models.size(), r.data->conversations.size()); // multi-turn
  for (std::size_t k = 0; k < models.size(); ++k)
    EXPECT_EQ(models[k], cfg.models.names[k % 3]) << k;
}

TEST(dataset_manager_build, models_do_not_change_prompts_or_order) {
  auto plain_cfg = synthetic_config();
  auto multi_cfg = synthetic_config();
  multi_cfg.models.names = {"a", "b"};
  multi_cfg.models.strategy = dataset::model_selection::random;
  multi_cfg.models.seed = 5;
  auto plain = build(plain_cfg);
  auto multi = build(multi_cfg);
  auto a = *ready(plain).data;
  auto b = *ready(multi).data;
  for (auto& conv : b.conversations)
    for (auto& t : conv.turns)
      t.model.clear();
  EXPECT_EQ(a, b);
}

TEST(dataset_manager_build, one_model_writes_the_same_inputs_json_as_none) {
  scratch_dir dir;
  auto none = synthetic_config();
  none.inputs_json_path = (dir.path() / "none.json").string();
  auto one = synthetic_config();
  one.models.names = {"a"};
  one.models.strategy = dataset::model_selection::random;
  one.inputs_json_path = (dir.path() / "one.json").string();
  auto built_none = build(none);
  auto built_one = build(one);
  EXPECT_EQ(*ready(built_none).data, *ready(built_one).data);
  const auto text = read_all(none.inputs_json_path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(read_all(one.inputs_json_path), text);
  EXPECT_EQ(text.find("\"model\": \"b\""), std::string::npos);
}

TEST(dataset_manager_build, inputs_json_shows_each_turns_model) {
  scratch_dir dir;
  auto cfg = synthetic_config();
  cfg.synthetic.turn_stddev = 0;
  cfg.synthetic.turn_mean = 1;
  cfg.models.names = {"a", "b"};
  cfg.inputs_json_path = (dir.path() / "inputs.json").string();
  auto built = build(cfg);
  ready(built);
  const auto text = read_all(cfg.inputs_json_path);
  std::vector<std::string> seen;
  for (auto pos = text.find("{\"model\":\""); pos != std::string::npos;
       pos = text.find("{\"model\":\"", pos + 1))
    seen.push_back(text.substr(pos + 10, 1));
  ASSERT_EQ(seen.size(), 12u) << text;
  for (std::size_t k = 0; k < seen.size(); ++k)
    EXPECT_EQ(seen[k], k % 2 == 0 ? "a" : "b") << k;
}

TEST(dataset_manager_build, an_empty_model_name_is_an_error) {
  auto cfg = synthetic_config();
  cfg.models.names = {"a", ""};
  auto built = build(cfg);
  ASSERT_FALSE(built);
  EXPECT_TRUE(is_error(built.error(), dataset::errc::bad_option));
  EXPECT_NE(error_message(built.error()).find("model_names[1]"),
            std::string::npos);
}

TEST(dataset_manager_build, a_bad_input_file_lists_every_bad_line) {
  scratch_dir dir;
  auto cfg = synthetic_config();
  cfg.input_file = (dir.path() / "bad.jsonl").string();
  {
    std::ofstream out{cfg.input_file};
    for (int i = 0; i < 25; ++i)
      out << "{\"text\": 1}\n";
  }
  auto built = build(cfg);
  ASSERT_FALSE(built);
  EXPECT_TRUE(is_error(built.error(), dataset::errc::bad_input));
  const auto msg = error_message(built.error());
  EXPECT_EQ(msg.rfind("--input-file " + cfg.input_file + ":\n  line 1: text: ",
                      0),
            0u)
    << msg;
  EXPECT_NE(msg.find("\n  line 25: text: "), std::string::npos) << msg;
  const auto* errors
    = error_payload<std::vector<dataset::load_error>>(built.error());
  ASSERT_NE(errors, nullptr);
  EXPECT_EQ(errors->size(), 25u);
}
