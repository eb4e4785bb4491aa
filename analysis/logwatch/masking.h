// Tokenizing and masking a log message before template mining. Drain (He et
// al., ICWS 2017, §III-B) splits the content on whitespace and replaces the
// variable parts it can recognise with a wildcard before the parse tree sees
// them; Loghub's benchmark does the same with per-data-set regexes. We use
// one rule that covers every kind the node logs we watch carry (numbers, hex,
// IPs and host:port, PCI addresses, UUIDs, paths with digits, BGL node ids
// such as R02-M1-N0-C:J12-U11, pids in `proc[1234]:`): a token's core (the
// token less leading/trailing brackets and punctuation) that contains a
// digit is variable and becomes `<*>`; the punctuation around it is kept so
// `rank 3,` and `rank 7,` mine to the same `rank <*>,`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ckpt::logwatch {

inline constexpr std::string_view kWildcard = "<*>";

// At most this many tokens of a message are mined; the rest are folded into
// the last token as `<*>` so one pathological line cannot grow the tree.
inline constexpr std::size_t kMaxTokens = 64;

// `token` with a digit-bearing core replaced by `<*>` (the token itself
// when it has none).
std::string mask_token(std::string_view token);

// Whitespace-separated tokens of `content`, each masked (at most kMaxTokens).
std::vector<std::string> tokenize_and_mask(std::string_view content);

// True when a token is a wildcard or still holds a digit (Drain's
// `hasNumbers`): such tokens never choose a branch of the parse tree.
bool is_variable_token(std::string_view token);

}  // namespace ckpt::logwatch
