// Status and Result: how every fallible function of the core reports failure.
//
// The core never throws. A function that can fail returns a Status (or a
// Result<T> holding a value or a Status); the bindings turn a failed Status
// into a typed Python exception chosen by its Code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace nvk::util {

enum class Code {
    kOk,
    kInvalidArgument,   // bad input from the caller: ValueError / TypeError
    kUnsupported,       // a construct or capability that is not available
    kCodegen,           // the generated SPIR-V failed validation or optimisation (a bug of ours)
    kInternal,          // a broken invariant inside the core (a bug of ours)
    kVulkan,            // a Vulkan call failed; the message names the VkResult
    kOutOfMemory,       // host or device memory exhausted
    kLoader,            // the Vulkan loader or a driver is missing
    kInterrupted,       // a wait was interrupted: a Python exception (KeyboardInterrupt) is set
    kTimeout,           // a wait took longer than the device's timeout (NUMBA_VULKAN_TIMEOUT)
    kDeviceLost,        // VK_ERROR_DEVICE_LOST: the device is unusable from now on
    kForked,            // used in a child process forked after the parent used Vulkan
};

class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status Ok() { return {}; }

    bool ok() const { return code_ == Code::kOk; }
    Code code() const { return code_; }
    const std::string& message() const { return message_; }

  private:
    Code code_ = Code::kOk;
    std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
inline Status CodegenError(std::string m) { return {Code::kCodegen, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}
    Result(Status status) : v_(std::move(status)) {}

    bool ok() const { return std::holds_alternative<T>(v_); }
    const Status& status() const {
        static const Status kOkStatus;
        return ok() ? kOkStatus : std::get<Status>(v_);
    }
    T& value() & { return std::get<T>(v_); }
    const T& value() const& { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() { return value(); }

  private:
    std::variant<T, Status> v_;
};

}  // namespace nvk::util

// Propagate a failed Status (or the Status of a failed Result) to the caller.
#define NVK_RETURN_IF_ERROR(expr)                      \
    do {                                               \
        auto nvk_status_ = (expr);                     \
        if (!nvk_status_.ok()) return nvk_status_;     \
    } while (0)

#define NVK_CONCAT_INNER_(a, b) a##b
#define NVK_CONCAT_(a, b) NVK_CONCAT_INNER_(a, b)
// NVK_ASSIGN_OR_RETURN(auto x, MakeX()): unwrap a Result or return its Status.
#define NVK_ASSIGN_OR_RETURN(lhs, expr) NVK_ASSIGN_OR_RETURN_(NVK_CONCAT_(nvk_r_, __LINE__), lhs, expr)
#define NVK_ASSIGN_OR_RETURN_(tmp, lhs, expr)          \
    auto tmp = (expr);                                 \
    if (!tmp.ok()) return tmp.status();                \
    lhs = std::move(tmp).value()
