// A growable byte buffer for output on hot paths: callers reserve room for a whole
// field once (ensure) and write through a pointer, instead of std::string's checked
// appends one piece at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace tp {

class OutBuffer {
 public:
  using value_type = char;  // for std::back_inserter (fmt::format_to)

  OutBuffer() = default;
  explicit OutBuffer(std::size_t capacity) { reserve(capacity); }
  OutBuffer(OutBuffer&&) noexcept = default;
  OutBuffer& operator=(OutBuffer&&) noexcept = default;
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer() = default;

  // Room for `extra` more bytes; returns where they go. Call commit() with what was used.
  [[gnu::always_inline]] char* ensure(std::size_t extra) {
    if (capacity_ - size_ < extra || data_ == nullptr) [[unlikely]] {
      grow(size_ + extra);
    }
    return data_.get() + size_;
  }
  void commit(std::size_t used) noexcept { size_ += used; }
  void commit_to(const char* end) noexcept { size_ = static_cast<std::size_t>(end - data_.get()); }

  [[gnu::always_inline]] void append(const char* bytes, std::size_t n) {
    if (n == 0) return;  // an empty view may have no pointer: memcpy must not get one
    copy_bytes(ensure(n), bytes, n);
    size_ += n;
  }
  // Writes `text` at `at` (room ensured by the caller); returns its end.
  [[gnu::always_inline]] static char* put(char* at, std::string_view text) noexcept {
    copy_bytes(at, text.data(), text.size());
    return at + text.size();
  }
  // memcpy, with the short pieces records are made of (names, kinds, numbers: up to 16
  // bytes) copied inline as two overlapping loads instead of a call.
  [[gnu::always_inline]] static void copy_bytes(char* to, const char* from, std::size_t n) noexcept {
    if (n > 16 || n < 4) {
      if (n != 0) std::memcpy(to, from, n);  // an empty view may have no pointer
    } else if (n >= 8) {
      copy_pair<std::uint64_t>(to, from, n);
    } else {
      copy_pair<std::uint32_t>(to, from, n);
    }
  }
  [[gnu::always_inline]] void append(std::string_view text) { append(text.data(), text.size()); }
  [[gnu::always_inline]] void push_back(char c) {
    *ensure(1) = c;
    ++size_;
  }
  [[gnu::always_inline]] OutBuffer& operator+=(std::string_view text) {
    append(text);
    return *this;
  }
  [[gnu::always_inline]] OutBuffer& operator+=(char c) {
    push_back(c);
    return *this;
  }

  void reserve(std::size_t capacity) {
    if (capacity > capacity_) grow(capacity);
  }
  void clear() noexcept { size_ = 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] const char* data() const noexcept { return data_.get(); }
  [[nodiscard]] char* data() noexcept { return data_.get(); }
  [[nodiscard]] std::string_view view() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::string_view view(std::size_t begin, std::size_t end) const noexcept {
    return {data_.get() + begin, end - begin};
  }

 private:
  // The first and the last sizeof(Word) of n bytes (sizeof(Word) <= n <= 2 * sizeof(Word)).
  template <class Word>
  [[gnu::always_inline]] static void copy_pair(char* to, const char* from, std::size_t n) noexcept {
    Word head = 0;
    Word tail = 0;
    std::memcpy(&head, from, sizeof(Word));
    std::memcpy(&tail, from + n - sizeof(Word), sizeof(Word));
    std::memcpy(to, &head, sizeof(Word));
    std::memcpy(to + n - sizeof(Word), &tail, sizeof(Word));
  }

  [[gnu::noinline]] void grow(std::size_t needed) {
    std::size_t capacity = capacity_ == 0 ? 256 : capacity_;
    while (capacity < needed) capacity *= 2;
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace tp
