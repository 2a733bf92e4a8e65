// A growable byte buffer for output on hot paths: callers reserve room for a whole
// field once (ensure) and write through a pointer, instead of std::string's checked
// appends one piece at a time.
#pragma once

#include <cstddef>
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
    std::memcpy(ensure(n), bytes, n);
    size_ += n;
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
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] const char* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::string_view view() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::string_view view(std::size_t begin, std::size_t end) const noexcept {
    return {data_.get() + begin, end - begin};
  }

 private:
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
