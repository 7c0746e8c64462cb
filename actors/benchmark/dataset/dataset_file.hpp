// On-disk form of a dataset, for shipping it to worker pods once and sharing
// it between a pod's worker processes through mmap.
//
// Two files in one directory (all integers little-endian):
//
// dataset.dat  header: magic "AIPFDATA", u32 version, u32 reserved (0);
//              then the model table: u32 model count, per model u32 length
//              and name bytes (distinct turn models, first-appearance
//              order); then one record per conversation, back to back:
//                u32 session_id length, session_id bytes, u32 turn count,
//                per turn: u32 text length, text bytes, u32 input_tokens,
//                i32 max_output_tokens, i64 timestamp_ms, i64 delay_ms,
//                u32 model (index into the model table; 0xFFFFFFFF = none,
//                i.e. the run's --model).
// index.dat    header (56 bytes): magic "AIPFINDX", u32 version, u32 flags
//              (bit 0 = has_timestamps, others 0), u64 conversation count,
//              u64 total turns, u64 dataset.dat size, u64 checksum of
//              dataset.dat, u64 checksum of index.dat (header bytes before
//              this field, then the offset table);
//              then (count + 1) u64 offsets into dataset.dat: record i spans
//              [offset[i], offset[i+1]); offset[0] = end of the model table,
//              offset[count] = dataset.dat size.
//
// Version history: 1 = no model table, no per-turn model; 2 = both. Only the
// current version is read: a pod running another build must not guess.
//
// The fixed-width offset table lets a worker find conversation i without
// scanning. Reading validates everything (magics, versions, sizes, both
// checksums, every record filling its span exactly) before returning, so a
// truncated, corrupt, mismatched or other-version pair is a clear error, and
// the accessors of a validated mapped_dataset cannot fail. Writing the same
// dataset gives the same bytes (byte-exact round trip).
//
// For transfer, export_compressed writes dataset.dat.zst + index.dat.zst;
// import_compressed decompresses them next to (or elsewhere from) the .zst
// files and reads the result back.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "runtime/io/mmap_file.hpp"
#include "runtime/io/zstd_stream.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::dataset {

/// File names inside a dataset directory.
inline constexpr std::string_view data_file_name = "dataset.dat";
inline constexpr std::string_view index_file_name = "index.dat";
inline constexpr std::string_view data_zst_file_name = "dataset.dat.zst";
inline constexpr std::string_view index_zst_file_name = "index.dat.zst";

/// Format version written by this build, and the only one it reads.
inline constexpr std::uint32_t dataset_file_version = 2;

// Errors are dataset::errc (dataset.hpp): io (the io error is the message,
// and rides along as a caf::error payload), bad_magic, version, truncated,
// checksum, corrupt, too_large. Every message names the file, what is wrong
// and the fix.

/// The bytes of both files.
struct encoded_dataset {
  std::string data;
  std::string index;
};

/// Encodes `ds`; fails only if a string exceeds 4 GiB - 1 bytes, a
/// conversation has more than 2^32 - 1 turns or there are 2^32 - 1 or more
/// distinct turn models.
[[nodiscard]] caf::expected<encoded_dataset>
encode_dataset(const dataset& ds);

/// Checksum used by the format (64-bit, non-cryptographic).
[[nodiscard]] std::uint64_t dataset_checksum(std::string_view bytes) noexcept;

/// Read-only, validated view of a dataset.dat/index.dat pair, decoding one
/// conversation at a time (what a worker does per credit). Move-only; const
/// access is thread-safe.
class mapped_dataset {
public:
  /// Validates `data` and `index` (see file comment); `data_name` and
  /// `index_name` label them in errors. The views must outlive the result.
  [[nodiscard]] static caf::expected<mapped_dataset>
  from_bytes(std::string_view data, std::string_view index,
             std::string_view data_name = data_file_name,
             std::string_view index_name = index_file_name);

  /// Maps and validates `dir`/dataset.dat and `dir`/index.dat.
  [[nodiscard]] static caf::expected<mapped_dataset>
  open(const std::filesystem::path& dir);

  /// Returns the number of conversations.
  [[nodiscard]] std::size_t size() const noexcept {
    return offsets_.empty() ? 0 : offsets_.size() - 1;
  }

  /// Returns the total number of turns of all conversations.
  [[nodiscard]] std::uint64_t total_turns() const noexcept {
    return total_turns_;
  }

  /// Returns the dataset's has_timestamps flag.
  [[nodiscard]] bool has_timestamps() const noexcept { return timestamps_; }

  /// Returns the model table (views into the mapped bytes).
  [[nodiscard]] const std::vector<std::string_view>& models() const noexcept {
    return models_;
  }

  /// Decodes conversation `i`; requires i < size().
  [[nodiscard]] conversation conversation_at(std::size_t i) const;

  /// Returns the raw record bytes of conversation `i`; requires i < size().
  [[nodiscard]] std::string_view record(std::size_t i) const noexcept;

  /// Decodes every conversation.
  [[nodiscard]] dataset to_dataset() const;

private:
  io::mmap_file data_file_;
  io::mmap_file index_file_;
  std::string_view data_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::string_view> models_;
  std::uint64_t total_turns_ = 0;
  bool timestamps_ = false;
};

/// Parses an encoded pair into a dataset (same checks as mapped_dataset).
[[nodiscard]] caf::expected<dataset>
decode_dataset(std::string_view data, std::string_view index);

/// Writes `dir`/dataset.dat then `dir`/index.dat, each atomically; `dir`
/// must exist. A crash between the two leaves a pair that fails to read
/// (checksum), never a wrong dataset.
[[nodiscard]] caf::expected<void>
write_dataset_files(const dataset& ds, const std::filesystem::path& dir);

/// Maps, validates and decodes `dir`/dataset.dat and `dir`/index.dat.
[[nodiscard]] caf::expected<dataset>
read_dataset_files(const std::filesystem::path& dir);

/// Writes `dir`/dataset.dat.zst and `dir`/index.dat.zst (each atomically).
[[nodiscard]] caf::expected<void>
export_compressed(const dataset& ds, const std::filesystem::path& dir,
                  int level = io::default_zstd_level);

/// Decompresses `zst_dir`/{dataset,index}.dat.zst into
/// `dat_dir`/{dataset,index}.dat, refusing output beyond `max_output_bytes`
/// per file (a pod's disk guard).
[[nodiscard]] caf::expected<void>
decompress_dataset_files(const std::filesystem::path& zst_dir,
                         const std::filesystem::path& dat_dir,
                         std::uint64_t max_output_bytes = io::unlimited_output);

/// decompress_dataset_files, then read_dataset_files(`dat_dir`).
[[nodiscard]] caf::expected<dataset>
import_compressed(const std::filesystem::path& zst_dir,
                  const std::filesystem::path& dat_dir,
                  std::uint64_t max_output_bytes = io::unlimited_output);

/// import_compressed with the .dat files next to the .zst files.
[[nodiscard]] caf::expected<dataset>
import_compressed(const std::filesystem::path& dir);

} // namespace aiperf::dataset
