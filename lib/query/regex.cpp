#define PCRE2_CODE_UNIT_WIDTH 8
#include "query/regex.hpp"

#include <fmt/format.h>
#include <pcre2.h>

#include "core/error.hpp"

namespace tp {

void Regex::CodeDeleter::operator()(void* code) const noexcept {
  pcre2_code_free(static_cast<pcre2_code*>(code));
}
void Regex::MatchDataDeleter::operator()(void* data) const noexcept {
  pcre2_match_data_free(static_cast<pcre2_match_data*>(data));
}

Regex::Regex(std::string_view pattern) : pattern_(pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    throw Error(ExitCode::usage, fmt::format("regular expression '{}': {} at offset {}", pattern,
                                             reinterpret_cast<const char*>(message), error_offset));
  }
  code_.reset(code);
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // best effort: the interpreter is the fallback
  match_data_.reset(pcre2_match_data_create_from_pattern(code, nullptr));
}

std::optional<bool> Regex::search(std::string_view text, std::string& why) const {
  const int rc = pcre2_match(static_cast<const pcre2_code*>(code_.get()), reinterpret_cast<PCRE2_SPTR>(text.data()),
                             text.size(), 0, 0, static_cast<pcre2_match_data*>(match_data_.get()), nullptr);
  if (rc >= 0) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(rc, message, sizeof message);
  why = reinterpret_cast<const char*>(message);
  return std::nullopt;
}

}  // namespace tp
