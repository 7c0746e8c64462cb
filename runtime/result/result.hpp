// A value or the error that prevented it: C++20 has no std::expected. Each
// component names its own error type and aliases this (io_result,
// codec_result, dataset_file_result, config::expected).
#pragma once

#include <utility>
#include <variant>

namespace aiperf {

template <class T, class E>
class result {
public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  result(E err) : v_(std::in_place_index<1>, std::move(err)) {}

  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  [[nodiscard]] bool has_value() const noexcept { return ok(); }
  explicit operator bool() const noexcept { return ok(); }
  /// Requires ok().
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// Requires !ok().
  [[nodiscard]] const E& error() const { return std::get<1>(v_); }

private:
  std::variant<T, E> v_;
};

} // namespace aiperf
