#include "actors/benchmark/dataset/dataset_file.hpp"

#include "runtime/io/durable_file.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

namespace aiperf::dataset {

// The format is little-endian; every platform we ship to (x86-64, arm64) is.
static_assert(std::endian::native == std::endian::little,
              "dataset files are little-endian; add byte swapping first");

namespace {

constexpr std::string_view data_magic = "AIPFDATA";
constexpr std::string_view index_magic = "AIPFINDX";
constexpr std::size_t data_header_size = 16;
constexpr std::size_t index_header_size = 56;
// Offset of the index checksum field, which covers the bytes before it.
constexpr std::size_t index_checksum_at = 48;
constexpr std::uint32_t flag_has_timestamps = 1;
// Smallest record: session id length + turn count, both empty.
constexpr std::size_t min_record_size = 8;
// Per turn besides the text: length, input_tokens, max_output_tokens,
// timestamp_ms, delay_ms, model index.
constexpr std::size_t turn_fixed_size = 4 + 4 + 4 + 8 + 8 + 4;
// Model index of a turn without a model of its own.
constexpr std::uint32_t no_model = 0xFFFF'FFFF;

// An io failure: its message, and the io error itself (errno and all) as a
// payload.
caf::error from_io(const caf::error& err) {
  return make_error(errc::io, error_message(err), err);
}

template <class T>
void put(std::string& out, T value) {
  char buf[sizeof(T)];
  std::memcpy(buf, &value, sizeof(T));
  out.append(buf, sizeof(T));
}

template <class T>
T get_at(std::string_view bytes, std::size_t pos) {
  T value;
  std::memcpy(&value, bytes.data() + pos, sizeof(T));
  return value;
}

// Bounds-checked sequential reader over one record.
class reader {
public:
  explicit reader(std::string_view bytes) : bytes_(bytes) {}

  template <class T>
  bool read(T& out) {
    if (bytes_.size() - pos_ < sizeof(T))
      return false;
    out = get_at<T>(bytes_, pos_);
    pos_ += sizeof(T);
    return true;
  }

  bool read_string(std::string_view& out) {
    std::uint32_t len = 0;
    if (!read(len) || bytes_.size() - pos_ < len)
      return false;
    out = bytes_.substr(pos_, len);
    pos_ += len;
    return true;
  }

  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - pos_; }

private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// Parses one record; `out` may be null to validate only. `models` is the
// file's model table. Returns the turn count, or nullopt with `why` set if
// the record is malformed.
std::optional<std::uint32_t>
parse_record(std::string_view bytes,
             const std::vector<std::string_view>& models, conversation* out,
             std::string& why) {
  reader r{bytes};
  std::string_view session;
  std::uint32_t turns = 0;
  if (!r.read_string(session) || !r.read(turns)) {
    why = "record header runs past its span";
    return std::nullopt;
  }
  // Each turn needs at least its fixed part; rejecting early bounds the
  // reserve() below by the record size instead of a corrupt count.
  if (turns > r.remaining() / turn_fixed_size) {
    why = "turn count " + std::to_string(turns) + " does not fit the record";
    return std::nullopt;
  }
  if (out != nullptr) {
    out->session_id.assign(session);
    out->turns.clear();
    out->turns.reserve(turns);
  }
  for (std::uint32_t t = 0; t < turns; ++t) {
    std::string_view text;
    std::uint32_t input_tokens = 0;
    std::int32_t max_output = 0;
    std::int64_t timestamp = 0;
    std::int64_t delay = 0;
    std::uint32_t model = 0;
    if (!r.read_string(text) || !r.read(input_tokens) || !r.read(max_output)
        || !r.read(timestamp) || !r.read(delay) || !r.read(model)) {
      why = "turn " + std::to_string(t) + " runs past the record's span";
      return std::nullopt;
    }
    if (model != no_model && model >= models.size()) {
      why = "turn " + std::to_string(t) + " names model "
            + std::to_string(model) + " but the model table has "
            + std::to_string(models.size());
      return std::nullopt;
    }
    if (out != nullptr) {
      out->turns.push_back(
        turn{std::string{text}, input_tokens, max_output, timestamp, delay,
             model == no_model ? std::string{} : std::string{models[model]}});
    }
  }
  if (r.remaining() != 0) {
    why = std::to_string(r.remaining()) + " unexpected bytes after turn "
          + std::to_string(turns);
    return std::nullopt;
  }
  return turns;
}

constexpr std::uint64_t p1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t p2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t p3 = 0x165667B19E3779F9ULL;

std::uint64_t mix(std::uint64_t w) noexcept {
  return std::rotl(w * p2, 31) * p1;
}

std::string path_string(const std::filesystem::path& dir,
                        std::string_view name) {
  return (dir / name).string();
}

} // namespace

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::io:
      return "io";
    case errc::bad_magic:
      return "bad_magic";
    case errc::version:
      return "version";
    case errc::truncated:
      return "truncated";
    case errc::checksum:
      return "checksum";
    case errc::corrupt:
      return "corrupt";
    case errc::too_large:
      return "too_large";
    case errc::bad_option:
      return "bad_option";
    case errc::bad_input:
      return "bad_input";
    case errc::empty:
      return "empty";
    case errc::cancelled:
      return "cancelled";
  }
  return "unknown";
}

std::uint64_t dataset_checksum(std::string_view bytes) noexcept {
  // Word-at-a-time multiply/rotate hash (xxHash64-style rounds and
  // finalizer): fast enough to check a GB-sized dataset at load time.
  std::uint64_t h = p3 ^ (bytes.size() * p1);
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    h ^= mix(get_at<std::uint64_t>(bytes, i));
    h = std::rotl(h, 27) * p1 + p3;
  }
  if (i < bytes.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, bytes.data() + i, bytes.size() - i);
    h ^= mix(w);
    h = std::rotl(h, 27) * p1 + p3;
  }
  h ^= h >> 33;
  h *= p2;
  h ^= h >> 29;
  h *= p3;
  h ^= h >> 32;
  return h;
}

caf::expected<encoded_dataset> encode_dataset(const dataset& ds) {
  constexpr auto max_u32 = std::numeric_limits<std::uint32_t>::max();
  encoded_dataset out;
  std::vector<std::uint64_t> offsets;
  offsets.reserve(ds.conversations.size() + 1);
  out.data.append(data_magic);
  put<std::uint32_t>(out.data, dataset_file_version);
  put<std::uint32_t>(out.data, 0);
  // Model table: each distinct turn model once, so a turn costs 4 bytes
  // however long the name.
  std::vector<std::string_view> models;
  std::unordered_map<std::string_view, std::uint32_t> model_index;
  for (const auto& conv : ds.conversations) {
    for (const auto& tu : conv.turns) {
      if (tu.model.empty() || model_index.count(tu.model) != 0)
        continue;
      if (models.size() >= no_model || tu.model.size() > max_u32) {
        return make_error(errc::too_large,
                          "model table: too many distinct turn models or a "
                          "model name over 4 GiB - 1 bytes; use fewer "
                          "--model names");
      }
      model_index.emplace(tu.model, static_cast<std::uint32_t>(models.size()));
      models.push_back(tu.model);
    }
  }
  put<std::uint32_t>(out.data, static_cast<std::uint32_t>(models.size()));
  for (auto name : models) {
    put<std::uint32_t>(out.data, static_cast<std::uint32_t>(name.size()));
    out.data.append(name);
  }
  std::uint64_t total_turns = 0;
  for (std::size_t c = 0; c < ds.conversations.size(); ++c) {
    const auto& conv = ds.conversations[c];
    if (conv.session_id.size() > max_u32 || conv.turns.size() > max_u32) {
      return make_error(errc::too_large,
                        "conversation " + std::to_string(c)
                          + ": session_id or turn count exceeds 2^32 - 1; "
                            "split the conversation");
    }
    offsets.push_back(out.data.size());
    put<std::uint32_t>(out.data,
                       static_cast<std::uint32_t>(conv.session_id.size()));
    out.data.append(conv.session_id);
    put<std::uint32_t>(out.data, static_cast<std::uint32_t>(conv.turns.size()));
    for (std::size_t t = 0; t < conv.turns.size(); ++t) {
      const auto& tu = conv.turns[t];
      if (tu.text.size() > max_u32) {
        return make_error(errc::too_large,
                          "conversation " + std::to_string(c) + " turn "
                            + std::to_string(t)
                            + ": text exceeds 4 GiB - 1 bytes; shorten it");
      }
      put<std::uint32_t>(out.data, static_cast<std::uint32_t>(tu.text.size()));
      out.data.append(tu.text);
      put<std::uint32_t>(out.data, tu.input_tokens);
      put<std::int32_t>(out.data, tu.max_output_tokens);
      put<std::int64_t>(out.data, tu.timestamp_ms);
      put<std::int64_t>(out.data, tu.delay_ms);
      put<std::uint32_t>(out.data, tu.model.empty() ? no_model
                                                    : model_index[tu.model]);
    }
    total_turns += conv.turns.size();
  }
  offsets.push_back(out.data.size());

  out.index.reserve(index_header_size + offsets.size() * 8);
  out.index.append(index_magic);
  put<std::uint32_t>(out.index, dataset_file_version);
  put<std::uint32_t>(out.index, ds.has_timestamps ? flag_has_timestamps : 0);
  put<std::uint64_t>(out.index, ds.conversations.size());
  put<std::uint64_t>(out.index, total_turns);
  put<std::uint64_t>(out.index, out.data.size());
  put<std::uint64_t>(out.index, dataset_checksum(out.data));
  put<std::uint64_t>(out.index, 0); // index checksum, filled in below
  for (auto off : offsets)
    put<std::uint64_t>(out.index, off);
  // The checksum covers the header before its field and the offset table.
  std::string covered = out.index.substr(0, index_checksum_at);
  covered.append(out.index, index_header_size);
  auto sum = dataset_checksum(covered);
  std::memcpy(out.index.data() + index_checksum_at, &sum, sizeof(sum));
  return out;
}

// -- mapped_dataset -----------------------------------------------------------

caf::expected<mapped_dataset>
mapped_dataset::from_bytes(std::string_view data, std::string_view index,
                           std::string_view data_name,
                           std::string_view index_name) {
  auto fail = [](errc code, std::string_view file, std::string what) {
    return make_error(code, "invalid dataset file " + std::string{file} + ": "
                              + what);
  };
  constexpr std::string_view reexport
    = "; export the dataset again (or re-download both files)";

  // Index header.
  if (index.size() < index_header_size) {
    return fail(errc::truncated, index_name,
                "truncated: " + std::to_string(index.size())
                  + " bytes, the header alone is "
                  + std::to_string(index_header_size) + std::string{reexport});
  }
  if (index.substr(0, 8) != index_magic)
    return fail(errc::bad_magic, index_name,
                "not an index.dat (wrong magic); pass the directory holding "
                "dataset.dat and index.dat");
  auto index_version = get_at<std::uint32_t>(index, 8);
  if (index_version != dataset_file_version) {
    return fail(errc::version, index_name,
                "format version " + std::to_string(index_version)
                  + ", this build reads only version "
                  + std::to_string(dataset_file_version)
                  + "; export it with the same aiperf-node version");
  }
  auto flags = get_at<std::uint32_t>(index, 12);
  auto count = get_at<std::uint64_t>(index, 16);
  auto total_turns = get_at<std::uint64_t>(index, 24);
  auto data_size = get_at<std::uint64_t>(index, 32);
  auto data_sum = get_at<std::uint64_t>(index, 40);
  auto index_sum = get_at<std::uint64_t>(index, index_checksum_at);
  auto table_bytes = index.size() - index_header_size;
  // Compare without computing (count + 1) * 8, which a corrupt count wraps.
  if (count >= table_bytes / 8) {
    return fail(errc::truncated, index_name,
                "truncated: " + std::to_string(index.size())
                  + " bytes, too short for the " + std::to_string(count)
                  + " conversations its header announces"
                  + std::string{reexport});
  }
  if (table_bytes != (count + 1) * 8) {
    return fail(errc::corrupt, index_name,
                "size " + std::to_string(index.size())
                  + " bytes does not match the " + std::to_string(count)
                  + " conversations its header announces"
                  + std::string{reexport});
  }
  {
    std::string covered{index.substr(0, index_checksum_at)};
    covered.append(index.substr(index_header_size));
    if (dataset_checksum(covered) != index_sum)
      return fail(errc::checksum, index_name,
                  "checksum mismatch (the file was modified or damaged)"
                    + std::string{reexport});
  }
  if ((flags & ~flag_has_timestamps) != 0)
    return fail(errc::corrupt, index_name,
                "unknown flag bits " + std::to_string(flags)
                  + std::string{reexport});

  // Data header and whole-file checks.
  if (data.size() < data_header_size) {
    return fail(errc::truncated, data_name,
                "truncated: " + std::to_string(data.size())
                  + " bytes, the header alone is "
                  + std::to_string(data_header_size) + std::string{reexport});
  }
  if (data.substr(0, 8) != data_magic)
    return fail(errc::bad_magic, data_name,
                "not a dataset.dat (wrong magic); pass the directory holding "
                "dataset.dat and index.dat");
  auto data_version = get_at<std::uint32_t>(data, 8);
  if (data_version != dataset_file_version) {
    return fail(errc::version, data_name,
                "format version " + std::to_string(data_version)
                  + ", this build reads only version "
                  + std::to_string(dataset_file_version)
                  + "; export it with the same aiperf-node version");
  }
  if (data.size() != data_size) {
    return fail(data.size() < data_size ? errc::truncated : errc::corrupt,
                data_name,
                "has " + std::to_string(data.size()) + " bytes but "
                  + std::string{index_name} + " says "
                  + std::to_string(data_size)
                  + " (truncated copy, or files from different exports)"
                  + std::string{reexport});
  }
  if (dataset_checksum(data) != data_sum)
    return fail(errc::checksum, data_name,
                "checksum does not match " + std::string{index_name}
                  + " (damaged, or files from different exports)"
                  + std::string{reexport});

  // Model table.
  mapped_dataset out;
  std::size_t records_begin = data_header_size;
  {
    reader r{data.substr(data_header_size)};
    std::uint32_t models = 0;
    // Each name needs at least its length field: bounds reserve().
    if (!r.read(models) || models > r.remaining() / 4)
      return fail(errc::corrupt, data_name,
                  "model table runs past the file" + std::string{reexport});
    out.models_.reserve(models);
    for (std::uint32_t m = 0; m < models; ++m) {
      std::string_view name;
      if (!r.read_string(name))
        return fail(errc::corrupt, data_name,
                    "model " + std::to_string(m) + " runs past the file"
                      + std::string{reexport});
      out.models_.push_back(name);
    }
    records_begin = data.size() - r.remaining();
  }

  // Offsets and records.
  out.data_ = data;
  out.timestamps_ = (flags & flag_has_timestamps) != 0;
  out.offsets_.resize(count + 1);
  std::memcpy(out.offsets_.data(), index.data() + index_header_size,
              (count + 1) * 8);
  if (out.offsets_.front() != records_begin
      || out.offsets_.back() != data.size()) {
    return fail(errc::corrupt, index_name,
                "offset table does not span " + std::string{data_name}
                  + std::string{reexport});
  }
  std::uint64_t turns_seen = 0;
  std::string why;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto begin = out.offsets_[i];
    auto end = out.offsets_[i + 1];
    if (end < begin || end - begin < min_record_size) {
      return fail(errc::corrupt, index_name,
                  "offsets of conversation " + std::to_string(i)
                    + " are out of order" + std::string{reexport});
    }
    auto turns = parse_record(data.substr(begin, end - begin), out.models_,
                              nullptr, why);
    if (!turns)
      return fail(errc::corrupt, data_name,
                  "conversation " + std::to_string(i) + ": " + why
                    + std::string{reexport});
    turns_seen += *turns;
  }
  if (turns_seen != total_turns) {
    return fail(errc::corrupt, index_name,
                "announces " + std::to_string(total_turns)
                  + " turns but the conversations hold "
                  + std::to_string(turns_seen) + std::string{reexport});
  }
  out.total_turns_ = total_turns;
  return out;
}

caf::expected<mapped_dataset>
mapped_dataset::open(const std::filesystem::path& dir) {
  auto data_file = io::mmap_file::open(dir / data_file_name);
  if (!data_file)
    return from_io(data_file.error());
  auto index_file = io::mmap_file::open(dir / index_file_name);
  if (!index_file)
    return from_io(index_file.error());
  auto result = from_bytes(data_file->bytes(), index_file->bytes(),
                           path_string(dir, data_file_name),
                           path_string(dir, index_file_name));
  if (!result)
    return result;
  // Moving an mmap_file keeps its address, so data_ stays valid.
  result->data_file_ = std::move(*data_file);
  result->index_file_ = std::move(*index_file);
  return result;
}

std::string_view mapped_dataset::record(std::size_t i) const noexcept {
  return data_.substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
}

conversation mapped_dataset::conversation_at(std::size_t i) const {
  conversation out;
  std::string why;
  // Validated in from_bytes, so this cannot fail.
  [[maybe_unused]] auto turns = parse_record(record(i), models_, &out, why);
  return out;
}

dataset mapped_dataset::to_dataset() const {
  dataset out;
  out.has_timestamps = timestamps_;
  out.conversations.reserve(size());
  for (std::size_t i = 0; i < size(); ++i)
    out.conversations.push_back(conversation_at(i));
  return out;
}

// -- files --------------------------------------------------------------------

caf::expected<dataset> decode_dataset(std::string_view data,
                                      std::string_view index) {
  auto mapped = mapped_dataset::from_bytes(data, index);
  if (!mapped)
    return std::move(mapped.error());
  return mapped->to_dataset();
}

caf::expected<void> write_dataset_files(const dataset& ds,
                                        const std::filesystem::path& dir) {
  auto encoded = encode_dataset(ds);
  if (!encoded)
    return std::move(encoded.error());
  // Data first: a crash before the index is replaced leaves an old index
  // whose size/checksum no longer match, which reading reports.
  if (auto w = io::atomic_write_file(dir / data_file_name, encoded->data); !w)
    return from_io(w.error());
  if (auto w = io::atomic_write_file(dir / index_file_name, encoded->index);
      !w)
    return from_io(w.error());
  return caf::unit;
}

caf::expected<dataset> read_dataset_files(const std::filesystem::path& dir) {
  auto mapped = mapped_dataset::open(dir);
  if (!mapped)
    return std::move(mapped.error());
  return mapped->to_dataset();
}

caf::expected<void> export_compressed(const dataset& ds,
                                      const std::filesystem::path& dir,
                                      int level) {
  if (auto valid = io::check_zstd_level(level); !valid)
    return from_io(valid.error());
  auto encoded = encode_dataset(ds);
  if (!encoded)
    return std::move(encoded.error());
  if (auto w = io::compress_to_file(encoded->data, dir / data_zst_file_name,
                                    level);
      !w)
    return from_io(w.error());
  if (auto w = io::compress_to_file(encoded->index, dir / index_zst_file_name,
                                    level);
      !w)
    return from_io(w.error());
  return caf::unit;
}

caf::expected<void>
decompress_dataset_files(const std::filesystem::path& zst_dir,
                         const std::filesystem::path& dat_dir,
                         std::uint64_t max_output_bytes) {
  if (auto w = io::decompress_file(zst_dir / data_zst_file_name,
                                   dat_dir / data_file_name, max_output_bytes);
      !w)
    return from_io(w.error());
  if (auto w = io::decompress_file(zst_dir / index_zst_file_name,
                                   dat_dir / index_file_name, max_output_bytes);
      !w)
    return from_io(w.error());
  return caf::unit;
}

caf::expected<dataset> import_compressed(const std::filesystem::path& zst_dir,
                                         const std::filesystem::path& dat_dir,
                                         std::uint64_t max_output_bytes) {
  if (auto done = decompress_dataset_files(zst_dir, dat_dir, max_output_bytes);
      !done)
    return std::move(done.error());
  return read_dataset_files(dat_dir);
}

caf::expected<dataset> import_compressed(const std::filesystem::path& dir) {
  return import_compressed(dir, dir);
}

} // namespace aiperf::dataset
