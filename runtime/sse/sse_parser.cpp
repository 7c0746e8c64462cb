#include "runtime/sse/sse_parser.hpp"

#include <limits>

namespace aiperf::sse {

namespace {

// Returns the value of a `retry` field, or nullopt unless it is a non-empty
// run of ASCII digits that fits in 64 bits.
std::optional<std::uint64_t> parse_retry(std::string_view value) {
  if (value.empty())
    return std::nullopt;
  std::uint64_t result = 0;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  for (char c : value) {
    if (c < '0' || c > '9')
      return std::nullopt;
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (result > (max - digit) / 10)
      return std::nullopt;
    result = result * 10 + digit;
  }
  return result;
}

} // namespace

void sse_parser::on_other_line(std::string_view line) {
  if (line.front() == ':') {
    line.remove_prefix(1);
    if (!line.empty() && line.front() == ' ')
      line.remove_prefix(1);
    event_.comment = line;
    return;
  }
  std::string_view name = line;
  std::string_view value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    name = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ')
      value.remove_prefix(1);
  }
  if (name == "data") {
    add_data(value);
  } else if (name == "event") {
    event_.event = value;
    dispatchable_ = true;
  } else if (name == "id") {
    // WHATWG: an id with NUL would corrupt Last-Event-ID; ignore the field.
    if (value.find('\0') == std::string_view::npos) {
      event_.id = value;
      dispatchable_ = true;
    }
  } else if (name == "retry") {
    if (auto ms = parse_retry(value)) {
      event_.retry = ms;
      dispatchable_ = true;
    }
  }
  // Anything else is an unknown field: ignored, as the spec says.
}

void sse_parser::append_data_line(std::string_view value) {
  // The first line is still a view into the input; copy it once, then keep
  // appending. `value` never points into `data_buf_`.
  if (event_.data_lines == 2)
    data_buf_.assign(event_.data);
  data_buf_.push_back('\n');
  data_buf_.append(value);
  event_.data = data_buf_;
}

std::string_view sse_parser::skip_bom(std::string_view bytes) {
  // A BOM may arrive split across reads; bytes matched by earlier reads are
  // held in `bom_matched_` until the match is decided.
  const std::size_t held = bom_matched_;
  std::size_t i = 0;
  while (bom_matched_ < 3 && i < bytes.size()) {
    if (bytes[i] != bom_bytes[bom_matched_]) {
      bom_checked_ = true;
      bom_matched_ = 0;
      // Not a BOM after all: what earlier reads held is ordinary input.
      if (held > 0)
        keep_tail(std::string_view{bom_bytes, held});
      return bytes;
    }
    ++bom_matched_;
    ++i;
  }
  if (bom_matched_ == 3) {
    bom_checked_ = true;
    bom_matched_ = 0;
  }
  return bytes.substr(i);
}

std::size_t sse_parser::complete_pending(std::string_view bytes) {
  // `pending_` holds the start of a block; find the empty line that ends it
  // in `bytes`, tracking line starts across the read boundary.
  bool at_line_start = pending_.back() == '\n' || pending_.back() == '\r';
  const char* first = bytes.data();
  const char* last = first + bytes.size();
  const char* pos = first;
  auto* cr = static_cast<const char*>(std::memchr(first, '\r', bytes.size()));
  if (cr == nullptr)
    cr = last;
  while (pos != last) {
    if (cr < pos) {
      cr = static_cast<const char*>(std::memchr(pos, '\r', last - pos));
      if (cr == nullptr)
        cr = last;
    }
    auto* lf = static_cast<const char*>(std::memchr(pos, '\n', cr - pos));
    const char* eol = lf != nullptr ? lf : cr;
    if (eol == last)
      break;
    const char* next = eol + 1;
    if (*eol == '\r') {
      if (next == last)
        skip_lf_ = true;
      else if (*next == '\n')
        ++next;
    }
    if (eol == pos && at_line_start) {
      auto end = static_cast<std::size_t>(next - first);
      if (!keep_tail(bytes.substr(0, end)))
        return npos;
      return end;
    }
    at_line_start = true;
    pos = next;
  }
  keep_tail(bytes);
  return npos;
}

bool sse_parser::keep_tail(std::string_view tail) {
  if (pending_.size() + tail.size() > max_event_bytes_) {
    failed_ = true;
    pending_.clear();
    return false;
  }
  pending_.append(tail);
  return true;
}

} // namespace aiperf::sse
