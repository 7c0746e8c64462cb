// How Go prints values into the messages kube-apiserver writes (fmt's %q
// and %v of a float64), so that our messages match byte for byte.
#pragma once

#include "k8s/object/validation.hpp" // go_quote, as messages quote values

#include <regex>
#include <string>
#include <string_view>

namespace aiperf::k8s::cel {

/// strconv.FormatFloat(v, 'g', -1, 64), which is fmt's %v of a float64:
/// 1, 0.5, 86400, 1e+06, 1.234567e+06, 1e-05.
[[nodiscard]] std::string go_format_g(double v);

/// A Go (RE2) pattern as a std::regex: a leading `(?i)`, `(?s)`, `(?m)`
/// group becomes flags; the rest is taken as ECMAScript, which agrees with
/// RE2 on the syntax CRD patterns use. Throws std::regex_error.
[[nodiscard]] std::regex go_regex(std::string_view pattern);

} // namespace aiperf::k8s::cel
