// The project's one error convention.
//
// A function that can fail returns `caf::expected<T>` (`caf::expected<void>`
// when there is no value). Its `caf::error` carries:
//   - a code of the failing component's enum (`enum class errc : uint8_t`,
//     declared with AIPERF_ERROR_ENUM below, which gives it a CAF category);
//   - a context message whose first element is the text for a person: it
//     names the input (flag, file:line, field, URL, service) and the fix;
//   - optionally, structured payloads after that text (a flag name, an errno,
//     a `k8s::status`), read back with `error_payload<T>()`.
//
//   return make_error(io::errc::write_failed, "cannot write out.json: ...");
//   if (!r) std::cerr << "error: " << error_message(r.error()) << '\n';
//
// Actors reply with the same errors, so a failure crosses an actor boundary
// unchanged. Why caf::expected and not a project type: a handler's return
// value and a request's error callback already speak caf::error, so one type
// covers functions and messages alike, with no conversion at each boundary.
#pragma once

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

/// Declares `enum_type` (a scoped enum with uint8_t underlying type and an
/// ADL `const char* to_string(enum_type)`) an error code of category
/// `category` (an atom literal of at most 10 characters). Use at global scope.
#define AIPERF_ERROR_ENUM(enum_type, category) CAF_ERROR_CODE_ENUM(enum_type, category)

namespace aiperf {

/// Makes an error of `code` whose context is `message` followed by
/// `payload...`.
template <class Code, class... Ts>
[[nodiscard]] caf::error make_error(Code code, std::string message, Ts&&... payload) {
  static_assert(caf::detail::error_factory<Code>::specialized,
                "declare the enum with AIPERF_ERROR_ENUM");
  return caf::error{static_cast<uint8_t>(code), caf::detail::error_factory<Code>::category,
                    caf::make_message(std::move(message), std::forward<Ts>(payload)...)};
}

/// True iff `err` is `code` of its enum's category.
template <class Code>
[[nodiscard]] bool is_error(const caf::error& err, Code code) noexcept {
  return err.category() == caf::detail::error_factory<Code>::category &&
         err.code() == static_cast<uint8_t>(code);
}

/// The code of `err` as `Code`, or `fallback` when `err` is of another
/// category.
template <class Code>
[[nodiscard]] Code error_code(const caf::error& err, Code fallback) noexcept {
  if (err.category() != caf::detail::error_factory<Code>::category)
    return fallback;
  return static_cast<Code>(err.code());
}

/// The text for a person: the context's leading string; for an error made
/// elsewhere (CAF's own `sec` codes) CAF's rendering of it.
[[nodiscard]] std::string error_message(const caf::error& err);

/// The first payload of type T in the context after its message, or null.
/// The pointer lives as long as `err` is not modified.
template <class T>
[[nodiscard]] const T* error_payload(const caf::error& err) {
  const auto& ctx = err.context();
  for (size_t i = 1; i < ctx.size(); ++i)
    if (ctx.match_element<T>(i))
      return &ctx.get_as<T>(i);
  return nullptr;
}

/// Registers the names of `Code`'s values with `cfg`, so that CAF's own
/// rendering (`system.render(err)`, logs) prints "io.write_failed".
template <class Code, class Config>
void add_error_category(Config& cfg) {
  cfg.add_error_category(caf::detail::error_factory<Code>::category,
                         [](uint8_t code, caf::atom_value category, const caf::message& ctx) {
                           std::string out = to_string(category);
                           out += '.';
                           out += to_string(static_cast<Code>(code));
                           if (!ctx.empty()) {
                             out += ": ";
                             out += ctx.match_element<std::string>(0) ? ctx.get_as<std::string>(0)
                                                                      : to_string(ctx);
                           }
                           return out;
                         });
}

} // namespace aiperf
