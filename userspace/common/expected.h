// Errors as values for what can be recovered (bpftrace's habit): a function
// that can fail returns Expected<T>; one fatal path at the top prints it.
// C++20 has no std::expected, so this is the small subset we use.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ckpt {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  [[nodiscard]] const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace ckpt
