#include "actors/benchmark/dataset/dataset_file.hpp"

#include "actors/benchmark/dataset/synthetic.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace aiperf::dataset;
using aiperf::error_code;
using aiperf::error_message;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << bytes;
}

// Every field at an edge: empty strings, NUL bytes, UTF-8, zero turns,
// extreme integers.
dataset edge_dataset() {
  dataset ds;
  ds.has_timestamps = true;
  std::string nul_text = "a";
  nul_text.push_back('\0');
  nul_text += "b \xE2\x82\xAC \n\t\"quoted\"";
  ds.conversations.push_back(
    {"chat-id-0",
     {turn{"hello world", 2, 16, 0, -1},
      turn{nul_text, std::numeric_limits<std::uint32_t>::max(),
           std::numeric_limits<std::int32_t>::min(),
           std::numeric_limits<std::int64_t>::max(),
           std::numeric_limits<std::int64_t>::min()}}});
  ds.conversations.push_back({"", {}});
  ds.conversations.push_back({"s2", {turn{"", 0, -1, 1234, 50}}});
  ds.conversations.push_back({std::string(70000, 'x'), {turn{}}});
  return ds;
}

dataset synthetic_dataset() {
  synthetic_options opts;
  opts.num_conversations = 200;
  opts.isl_mean = 64;
  opts.isl_stddev = 10;
  opts.osl_mean = 16;
  opts.turn_mean = 3;
  opts.turn_stddev = 1;
  opts.turn_delay_mean_ms = 100;
  return generate_synthetic(opts);
}

template <class T>
void poke(std::string& bytes, std::size_t pos, T value) {
  std::memcpy(bytes.data() + pos, &value, sizeof(T));
}

// Recomputes both checksums after a deliberate structural edit, so the test
// reaches the structural checks behind them.
void reseal(encoded_dataset& e) {
  poke<std::uint64_t>(e.index, 32, e.data.size());
  poke<std::uint64_t>(e.index, 40, dataset_checksum(e.data));
  std::string covered = e.index.substr(0, 48);
  covered.append(e.index, 56);
  poke<std::uint64_t>(e.index, 48, dataset_checksum(covered));
}

class dataset_file_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path()
           / ("aiperf_dataset_file_test." + std::to_string(::getpid()) + "."
              + std::to_string(rd()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path subdir(const std::string& name) {
    auto p = dir_ / name;
    fs::create_directories(p);
    return p;
  }

  encoded_dataset encoded(const dataset& ds) {
    auto e = encode_dataset(ds);
    EXPECT_TRUE(e) << error_message(e.error());
    return *e;
  }

  fs::path dir_;
};

} // namespace

TEST_F(dataset_file_test, round_trip_is_exact_for_edge_values) {
  auto ds = edge_dataset();
  ASSERT_TRUE(write_dataset_files(ds, dir_));
  auto back = read_dataset_files(dir_);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, ds);
}

TEST_F(dataset_file_test, round_trip_is_byte_exact) {
  auto ds = synthetic_dataset();
  auto a = subdir("a");
  auto b = subdir("b");
  ASSERT_TRUE(write_dataset_files(ds, a));
  auto back = read_dataset_files(a);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, ds);
  ASSERT_TRUE(write_dataset_files(*back, b));
  EXPECT_EQ(read_all(a / "dataset.dat"), read_all(b / "dataset.dat"));
  EXPECT_EQ(read_all(a / "index.dat"), read_all(b / "index.dat"));
  // The files are exactly what encode_dataset produces.
  auto e = encoded(ds);
  EXPECT_EQ(read_all(a / "dataset.dat"), e.data);
  EXPECT_EQ(read_all(a / "index.dat"), e.index);
}

TEST_F(dataset_file_test, empty_dataset_round_trips) {
  dataset ds;
  ASSERT_TRUE(write_dataset_files(ds, dir_));
  auto back = read_dataset_files(dir_);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, ds);
  auto e = encoded(ds);
  // Header and an empty model table.
  EXPECT_EQ(e.data.size(), 16u + 4u);
  EXPECT_EQ(e.index.size(), 56u + 8u);
}

TEST_F(dataset_file_test, mapped_dataset_decodes_one_conversation_at_a_time) {
  auto ds = synthetic_dataset();
  ASSERT_TRUE(write_dataset_files(ds, dir_));
  auto mapped = mapped_dataset::open(dir_);
  ASSERT_TRUE(mapped) << error_message(mapped.error());
  ASSERT_EQ(mapped->size(), ds.conversations.size());
  std::uint64_t turns = 0;
  for (const auto& c : ds.conversations)
    turns += c.turns.size();
  EXPECT_EQ(mapped->total_turns(), turns);
  EXPECT_EQ(mapped->has_timestamps(), ds.has_timestamps);
  for (std::size_t i = ds.conversations.size(); i-- > 0;)
    ASSERT_EQ(mapped->conversation_at(i), ds.conversations[i]) << i;
  // Moving keeps the mapping (and the views into it) valid.
  mapped_dataset moved = std::move(*mapped);
  EXPECT_EQ(moved.conversation_at(7), ds.conversations[7]);
  EXPECT_FALSE(moved.record(0).empty());
}

TEST_F(dataset_file_test, compressed_export_import_round_trip) {
  auto ds = synthetic_dataset();
  auto zst = subdir("zst");
  auto dat = subdir("dat");
  ASSERT_TRUE(export_compressed(ds, zst));
  ASSERT_TRUE(fs::exists(zst / "dataset.dat.zst"));
  ASSERT_TRUE(fs::exists(zst / "index.dat.zst"));
  auto back = import_compressed(zst, dat);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, ds);
  // Decompressed files are the exact encoding, and smaller compressed.
  auto e = encoded(ds);
  EXPECT_EQ(read_all(dat / "dataset.dat"), e.data);
  EXPECT_EQ(read_all(dat / "index.dat"), e.index);
  EXPECT_LT(fs::file_size(zst / "dataset.dat.zst"), e.data.size() / 2);
  // And in place.
  auto same = import_compressed(zst);
  ASSERT_TRUE(same) << error_message(same.error());
  EXPECT_EQ(*same, ds);
}

TEST_F(dataset_file_test, every_truncation_is_a_clear_error) {
  auto e = encoded(edge_dataset());
  for (std::size_t cut = 0; cut < e.index.size(); ++cut) {
    auto r = decode_dataset(e.data, std::string_view{e.index}.substr(0, cut));
    ASSERT_FALSE(r) << "index cut at " << cut;
    EXPECT_NE(error_message(r.error()).find("index.dat"), std::string::npos);
  }
  for (std::size_t cut = 0; cut < e.data.size(); cut += 97) {
    auto r = decode_dataset(std::string_view{e.data}.substr(0, cut), e.index);
    ASSERT_FALSE(r) << "data cut at " << cut;
    EXPECT_EQ(error_code(r.error(), errc{}), errc::truncated) << cut;
    EXPECT_NE(error_message(r.error()).find("dataset.dat"), std::string::npos);
  }
}

TEST_F(dataset_file_test, truncated_file_on_disk_names_the_file) {
  ASSERT_TRUE(write_dataset_files(edge_dataset(), dir_));
  fs::resize_file(dir_ / "dataset.dat", 100);
  auto r = read_dataset_files(dir_);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::truncated);
  EXPECT_NE(error_message(r.error()).find((dir_ / "dataset.dat").string()),
            std::string::npos)
    << error_message(r.error());
}

TEST_F(dataset_file_test, every_bit_flip_is_detected) {
  auto e = encoded(edge_dataset());
  for (std::size_t pos = 0; pos < e.index.size(); ++pos) {
    auto bad = e.index;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x04);
    EXPECT_FALSE(decode_dataset(e.data, bad)) << "index flip at " << pos;
  }
  for (std::size_t pos = 0; pos < e.data.size(); pos += 13) {
    auto bad = e.data;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x04);
    auto r = decode_dataset(bad, e.index);
    ASSERT_FALSE(r) << "data flip at " << pos;
  }
  auto bad = e.data;
  bad[200] = static_cast<char>(bad[200] ^ 1);
  auto r = decode_dataset(bad, e.index);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::checksum);
}

TEST_F(dataset_file_test, wrong_magic_and_version_are_named) {
  auto e = encoded(edge_dataset());
  auto r = decode_dataset(e.data, e.data);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::bad_magic);

  // A version-1 pair (no per-turn models) from an older build.
  auto v1 = e.index;
  poke<std::uint32_t>(v1, 8, 1);
  r = decode_dataset(e.data, v1);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::version);
  EXPECT_NE(error_message(r.error())
              .find("format version 1, this build reads only version 2"),
            std::string::npos)
    << error_message(r.error());
  EXPECT_NE(error_message(r.error()).find("index.dat"), std::string::npos);

  auto d2 = e.data;
  poke<std::uint32_t>(d2, 8, 7);
  r = decode_dataset(d2, e.index);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::version);
}

TEST_F(dataset_file_test, files_from_different_exports_do_not_mix) {
  auto a = encoded(edge_dataset());
  auto b = encoded(synthetic_dataset());
  EXPECT_FALSE(decode_dataset(a.data, b.index));
  EXPECT_FALSE(decode_dataset(b.data, a.index));
  // Same size, different content: caught by the data checksum.
  auto c = edge_dataset();
  c.conversations[0].turns[0].text[0] = 'H';
  auto ce = encoded(c);
  ASSERT_EQ(ce.data.size(), a.data.size());
  auto r = decode_dataset(ce.data, a.index);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::checksum);
}

TEST_F(dataset_file_test, structural_corruption_behind_valid_checksums) {
  auto base = encoded(edge_dataset());
  auto expect_corrupt = [](encoded_dataset e, const char* what) {
    reseal(e);
    auto r = decode_dataset(e.data, e.index);
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(error_code(r.error(), errc{}), errc::corrupt)
      << what << ": " << error_message(r.error());
  };
  {
    auto e = base; // conversation 1 starts before conversation 0 ends
    poke<std::uint64_t>(e.index, 56 + 8, 20);
    expect_corrupt(e, "offsets out of order");
  }
  {
    auto e = base;
    poke<std::uint64_t>(e.index, 24, 999);
    expect_corrupt(e, "total turns mismatch");
  }
  {
    auto e = base;
    poke<std::uint32_t>(e.index, 12, 6);
    expect_corrupt(e, "unknown flags");
  }
  {
    auto e = base; // conversation 0's turn count made huge
    // After the header, the empty model table, the session id length and
    // "chat-id-0".
    poke<std::uint32_t>(e.data, 16 + 4 + 4 + 9, 0x7fffffff);
    expect_corrupt(e, "turn count");
  }
  {
    auto e = base; // an extra offset entry
    e.index.append(8, '\0');
    expect_corrupt(e, "index size");
  }
}

TEST_F(dataset_file_test, missing_files_are_io_errors_naming_the_path) {
  auto r = read_dataset_files(dir_ / "nowhere");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::io);
  EXPECT_NE(error_message(r.error()).find("dataset.dat"), std::string::npos);
  // The io error travels along, errno and all.
  EXPECT_NE(aiperf::error_payload<caf::error>(r.error()), nullptr);
  auto i = import_compressed(dir_);
  ASSERT_FALSE(i);
  EXPECT_NE(error_message(i.error()).find("dataset.dat.zst"), std::string::npos)
    << error_message(i.error());
}

TEST_F(dataset_file_test, corrupt_or_oversized_zst_is_rejected) {
  auto ds = synthetic_dataset();
  ASSERT_TRUE(export_compressed(ds, dir_));
  auto dat = subdir("dat");
  auto limited = import_compressed(dir_, dat, 1000);
  ASSERT_FALSE(limited);
  EXPECT_NE(error_message(limited.error()).find("max_output_bytes"),
            std::string::npos);

  auto zst = read_all(dir_ / "index.dat.zst");
  zst.resize(zst.size() - 3);
  write_all(dir_ / "index.dat.zst", zst);
  auto r = import_compressed(dir_, dat);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::io);
  EXPECT_NE(error_message(r.error()).find("index.dat.zst"), std::string::npos)
    << error_message(r.error());
}

TEST_F(dataset_file_test, invalid_compression_level_is_rejected) {
  auto done = export_compressed(edge_dataset(), dir_, 99);
  ASSERT_FALSE(done);
  EXPECT_NE(error_message(done.error()).find("level"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "dataset.dat.zst"));
}

TEST(dataset_checksum, differs_on_any_change_and_length) {
  std::string a(1000, 'a');
  auto base = dataset_checksum(a);
  EXPECT_EQ(dataset_checksum(a), base);
  for (std::size_t pos : {0u, 7u, 8u, 500u, 999u}) {
    auto b = a;
    b[pos] = 'b';
    EXPECT_NE(dataset_checksum(b), base) << pos;
  }
  EXPECT_NE(dataset_checksum(std::string(1000, '\0')),
            dataset_checksum(std::string(1001, '\0')));
}

namespace {

// Turns sent to two models (long names: the table stores each once) and
// turns without a model (the run's --model).
dataset model_dataset() {
  auto ds = synthetic_dataset();
  const std::string a(40, 'a');
  const std::string b = "org/model-b";
  std::size_t k = 0;
  for (auto& conv : ds.conversations)
    for (auto& t : conv.turns) {
      if (k % 5 != 4)
        t.model = (k % 2 == 0) ? a : b;
      ++k;
    }
  return ds;
}

} // namespace

TEST_F(dataset_file_test, per_turn_models_round_trip_as_table_indices) {
  auto ds = model_dataset();
  ASSERT_TRUE(write_dataset_files(ds, dir_));
  auto mapped = mapped_dataset::open(dir_);
  ASSERT_TRUE(mapped) << error_message(mapped.error());
  // First-appearance order: turn 0 is model a.
  ASSERT_EQ(mapped->models().size(), 2u);
  EXPECT_EQ(mapped->models()[0], std::string(40, 'a'));
  EXPECT_EQ(mapped->models()[1], "org/model-b");
  for (std::size_t i = 0; i < ds.conversations.size(); ++i)
    ASSERT_EQ(mapped->conversation_at(i), ds.conversations[i]) << i;
  auto back = read_dataset_files(dir_);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, ds);
  // Byte-exact re-encoding.
  EXPECT_EQ(encoded(*back).data, encoded(ds).data);

  // A model costs a table entry, not its name per turn: the file is as large
  // as without models plus only the table.
  auto plain = synthetic_dataset();
  const auto table = 4 + 40 + 4 + std::string{"org/model-b"}.size();
  EXPECT_EQ(encoded(ds).data.size(), encoded(plain).data.size() + table);
}

TEST_F(dataset_file_test, model_table_damage_is_detected) {
  auto e = encoded(model_dataset());
  for (std::size_t cut = 16; cut < 120; ++cut) {
    auto r = decode_dataset(std::string_view{e.data}.substr(0, cut), e.index);
    ASSERT_FALSE(r) << "data cut at " << cut;
  }
  for (std::size_t pos = 16; pos < 80; ++pos) {
    auto bad = e.data;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x04);
    EXPECT_FALSE(decode_dataset(bad, e.index)) << "data flip at " << pos;
  }
}

TEST_F(dataset_file_test, out_of_range_model_index_is_corrupt) {
  dataset ds;
  ds.conversations.push_back({"s", {turn{"hi", 1, -1, -1, -1, "m"}}});
  auto e = encoded(ds);
  // The turn's model index is the record's last field, the file's last 4
  // bytes; the table holds one model, so index 1 is out of range.
  ASSERT_EQ(e.data.substr(e.data.size() - 4), std::string(4, '\0'));
  poke<std::uint32_t>(e.data, e.data.size() - 4, 1);
  reseal(e);
  auto r = decode_dataset(e.data, e.index);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_code(r.error(), errc{}), errc::corrupt);
  EXPECT_NE(error_message(r.error()).find("model 1"), std::string::npos)
    << error_message(r.error());
  // 0xFFFFFFFF means "no model": the run's --model.
  poke<std::uint32_t>(e.data, e.data.size() - 4, 0xFFFFFFFFu);
  reseal(e);
  auto none = decode_dataset(e.data, e.index);
  ASSERT_TRUE(none) << error_message(none.error());
  EXPECT_EQ(none->conversations[0].turns[0].model, "");
}
