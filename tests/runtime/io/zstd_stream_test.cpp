#include "runtime/io/zstd_stream.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace aiperf::io;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Text-like data (compressible) mixed with random bytes (not), so frames
// span several zstd blocks and output buffers.
std::string sample_data(std::size_t n, unsigned seed = 7) {
  std::mt19937 rng{seed};
  std::string out;
  out.reserve(n);
  static constexpr std::string_view words[] = {"the ", "quick ", "brown ",
                                               "fox ", "jumps ", "\n"};
  while (out.size() < n) {
    if (rng() % 8 == 0)
      out.push_back(static_cast<char>(rng()));
    else
      out += words[rng() % std::size(words)];
  }
  out.resize(n);
  return out;
}

class zstd_stream_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path()
           / ("aiperf_zstd_test." + std::to_string(::getpid()) + "."
              + std::to_string(rd()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path write(const std::string& name, const std::string& contents) {
    auto p = dir_ / name;
    std::ofstream out{p, std::ios::binary};
    out << contents;
    return p;
  }

  fs::path dir_;
};

} // namespace

TEST_F(zstd_stream_test, buffer_round_trip_for_many_sizes) {
  for (std::size_t n : {0u, 1u, 100u, 131072u, 5u << 20}) {
    auto plain = sample_data(n);
    auto packed = compress_buffer(plain);
    ASSERT_TRUE(packed) << aiperf::error_message(packed.error());
    auto unpacked = decompress_buffer(*packed, "test");
    ASSERT_TRUE(unpacked) << aiperf::error_message(unpacked.error());
    EXPECT_EQ(*unpacked, plain) << "size " << n;
  }
}

TEST_F(zstd_stream_test, compressible_data_shrinks) {
  std::string plain(1 << 20, 'a');
  auto packed = compress_buffer(plain);
  ASSERT_TRUE(packed);
  EXPECT_LT(packed->size(), plain.size() / 100);
}

TEST_F(zstd_stream_test, chunked_push_matches_one_shot_output) {
  auto plain = sample_data(1 << 20);
  std::string streamed;
  zstd_compressor zc{[&](std::string_view b) {
                       streamed.append(b);
                       return true;
                     },
                     "chunks"};
  for (std::size_t pos = 0; pos < plain.size(); pos += 4097)
    ASSERT_TRUE(zc.write(std::string_view{plain}.substr(pos, 4097)));
  ASSERT_TRUE(zc.finish());
  EXPECT_EQ(zc.bytes_in(), plain.size());
  EXPECT_EQ(zc.bytes_out(), streamed.size());

  // Decompress one byte at a time: the frame can arrive in any chunking.
  std::string back;
  zstd_decompressor zd{[&](std::string_view b) {
                         back.append(b);
                         return true;
                       },
                       "bytes"};
  for (char c : streamed)
    ASSERT_TRUE(zd.write(std::string_view{&c, 1}));
  ASSERT_TRUE(zd.finish());
  EXPECT_EQ(back, plain);
}

TEST_F(zstd_stream_test, concatenated_frames_decompress_to_concatenation) {
  auto a = compress_buffer("first ");
  auto b = compress_buffer("second");
  ASSERT_TRUE(a && b);
  auto both = decompress_buffer(*a + *b, "two frames");
  ASSERT_TRUE(both) << aiperf::error_message(both.error());
  EXPECT_EQ(*both, "first second");
}

TEST_F(zstd_stream_test, every_truncation_is_an_error) {
  auto packed = compress_buffer(sample_data(5000));
  ASSERT_TRUE(packed);
  for (std::size_t cut = 0; cut < packed->size(); ++cut) {
    auto r = decompress_buffer(std::string_view{*packed}.substr(0, cut),
                               "cut.zst");
    ASSERT_FALSE(r) << "cut at " << cut;
    EXPECT_NE(aiperf::error_message(r.error()).find("cut.zst"),
              std::string::npos);
  }
}

TEST_F(zstd_stream_test, truncation_names_the_problem) {
  auto packed = compress_buffer(sample_data(5000));
  ASSERT_TRUE(packed);
  auto r = decompress_buffer(std::string_view{*packed}.substr(
                               0, packed->size() - 1),
                             "x.zst");
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), errc::corrupt));
  auto message = aiperf::error_message(r.error());
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST_F(zstd_stream_test, bit_flips_are_detected) {
  auto plain = sample_data(20000);
  auto packed = compress_buffer(plain);
  ASSERT_TRUE(packed);
  std::size_t detected = 0;
  for (std::size_t pos = 0; pos < packed->size(); pos += 7) {
    auto bad = *packed;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    auto r = decompress_buffer(bad, "flip");
    // Some bits are don't-cares (padding); the content checksum catches
    // every flip that would change the output, so success means exact.
    EXPECT_TRUE(!r || *r == plain) << "flip at " << pos;
    if (!r)
      ++detected;
  }
  EXPECT_GT(detected, 0u);
}

TEST_F(zstd_stream_test, empty_and_garbage_input_are_errors) {
  auto empty = decompress_buffer("", "empty.zst");
  ASSERT_FALSE(empty);
  EXPECT_NE(aiperf::error_message(empty.error()).find("empty"),
            std::string::npos);
  auto garbage = decompress_buffer("this is not zstd", "g.zst");
  ASSERT_FALSE(garbage);
  EXPECT_TRUE(aiperf::is_error(garbage.error(), errc::corrupt));
  auto packed = compress_buffer("data");
  ASSERT_TRUE(packed);
  auto trailing = decompress_buffer(*packed + "junk", "t.zst");
  EXPECT_FALSE(trailing);
}

TEST_F(zstd_stream_test, output_limit_is_enforced) {
  auto packed = compress_buffer(std::string(1 << 20, 'z'));
  ASSERT_TRUE(packed);
  auto r = decompress_buffer(*packed, "bomb.zst", 1000);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), errc::too_large));
  EXPECT_NE(aiperf::error_message(r.error()).find("max_output_bytes"),
            std::string::npos);
  EXPECT_TRUE(decompress_buffer(*packed, "ok.zst", 1 << 20));
}

TEST_F(zstd_stream_test, refusing_sink_stops_with_an_error) {
  zstd_compressor zc{[](std::string_view) { return false; }, "peer"};
  zc.write(sample_data(1 << 20));
  auto done = zc.finish();
  ASSERT_FALSE(done);
  EXPECT_TRUE(aiperf::is_error(done.error(), errc::canceled));
  EXPECT_FALSE(zc.write("more"));
}

TEST_F(zstd_stream_test, invalid_level_is_rejected) {
  EXPECT_TRUE(check_zstd_level(3));
  auto valid = check_zstd_level(1000);
  ASSERT_FALSE(valid);
  EXPECT_TRUE(aiperf::is_error(valid.error(), errc::invalid_argument));
  EXPECT_NE(aiperf::error_message(valid.error()).find("1.."),
            std::string::npos);
  auto r = compress_buffer("x", 1000);
  EXPECT_FALSE(r);
}

TEST_F(zstd_stream_test, finish_twice_and_write_after_finish_are_errors) {
  std::string sink;
  zstd_compressor zc{[&](std::string_view b) {
                       sink.append(b);
                       return true;
                     },
                     "twice"};
  ASSERT_TRUE(zc.finish());
  EXPECT_FALSE(zc.write("late"));
  auto again = zc.finish();
  EXPECT_FALSE(again);
  EXPECT_TRUE(aiperf::is_error(again.error(), errc::closed));
}

TEST_F(zstd_stream_test, file_round_trip) {
  auto plain = sample_data(3 << 20, 11);
  auto in = write("dataset.dat", plain);
  auto packed = dir_ / "dataset.dat.zst";
  auto out = dir_ / "copy.dat";
  ASSERT_TRUE(compress_file(in, packed));
  ASSERT_TRUE(decompress_file(packed, out));
  EXPECT_EQ(read_all(out), plain);
}

TEST_F(zstd_stream_test, buffer_to_file_and_file_to_sink) {
  auto plain = sample_data(200000);
  auto packed = dir_ / "p.zst";
  ASSERT_TRUE(compress_to_file(plain, packed));
  EXPECT_EQ(*decompress_buffer(read_all(packed), "p"), plain);

  auto in = write("plain.dat", plain);
  std::string streamed;
  ASSERT_TRUE(compress_file_to_sink(in, [&](std::string_view b) {
    streamed.append(b);
    return true;
  }));
  auto out = dir_ / "from_stream.dat";
  ASSERT_TRUE(decompress_to_file(streamed, "http body", out));
  EXPECT_EQ(read_all(out), plain);
}

TEST_F(zstd_stream_test, missing_input_error_names_the_file) {
  auto missing = dir_ / "missing.zst";
  auto done = decompress_file(missing, dir_ / "out.dat");
  ASSERT_FALSE(done);
  EXPECT_EQ(error_errno(done.error()), ENOENT);
  auto message = aiperf::error_message(done.error());
  EXPECT_NE(message.find(missing.string()), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir_ / "out.dat"));
  auto done2 = compress_file(dir_ / "missing.dat", dir_ / "o.zst");
  ASSERT_FALSE(done2);
  EXPECT_NE(aiperf::error_message(done2.error()).find("missing.dat"),
            std::string::npos);
}

TEST_F(zstd_stream_test, corrupt_input_keeps_the_previous_output) {
  auto out = write("out.dat", "previous");
  auto bad = write("bad.zst", "definitely not zstd");
  auto done = decompress_file(bad, out);
  ASSERT_FALSE(done);
  EXPECT_NE(aiperf::error_message(done.error()).find("bad.zst"),
            std::string::npos);
  EXPECT_EQ(read_all(out), "previous");
  // No temp files left behind either.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator{dir_})
    ++entries;
  EXPECT_EQ(entries, 2u);
}
