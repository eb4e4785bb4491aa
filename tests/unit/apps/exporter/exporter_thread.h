// The exporter's side of the registration socket for tests: a real
// RegistrationServer served from a thread of its own, as the exporter's loop
// would. Records offered from the test run on that thread too (the server is
// single-threaded by design); failures reported to it are collected.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/exporter/registration_server.h"

namespace ckpt::test {

class ExporterThread {
 public:
  explicit ExporterThread(RegistrationOptions options) {
    RegistrationServer::Hooks hooks;
    hooks.tcp_enabled = [] { return true; };
    hooks.nfs_enabled = [this] { return nfs_.load(); };
    hooks.drops = [] { return std::vector<DropRecord>{{"jobio", "ringbuf_full", 3}}; };
    // As the exporter drains the kernel's rings before it answers a sync,
    // what the test offered so far is handed over first: a sync the
    // server reads in the same serve() call as the offers were queued
    // must not overtake them.
    hooks.drain = [this] {
      ++drains_;
      run_tasks();
    };
    hooks.report_failure = [this](FailureRecord f) {
      std::lock_guard<std::mutex> lock(mutex_);
      failures_.push_back(std::move(f));
    };
    hooks.report_held_back = [this](uint64_t lines) { held_back_ += lines; };
    hooks.rejected = [this](std::string_view reason) {
      std::lock_guard<std::mutex> lock(mutex_);
      rejected_.emplace_back(reason);
    };
    hooks.note = [this](const std::string& note) {
      std::lock_guard<std::mutex> lock(mutex_);
      notes_.push_back(note);
    };
    hooks.probe_mode = [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      return probe_mode_;
    };
    hooks.tracing_started = [this] { ++tracing_started_; };
    auto server = RegistrationServer::listen(std::move(options), std::move(hooks));
    if (!server) {
      error_ = server.error().message;
      return;
    }
    server_ = std::move(*server);
    thread_ = std::thread([this] {
      while (!stop_) {
        run_tasks();
        server_->serve();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~ExporterThread() { stop(); }
  // The queued offers and questions, in order, on the server's thread.
  void run_tasks() {
    std::deque<std::function<void()>> tasks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks.swap(tasks_);
    }
    for (auto& f : tasks) f();
  }
  ExporterThread(const ExporterThread&) = delete;
  ExporterThread& operator=(const ExporterThread&) = delete;

  // Stops serving and closes the socket and every client (an exporter gone).
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }
  void offer(ForwardRing ring, const void* data, size_t size) {
    std::string copy(static_cast<const char*>(data), size);
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back([this, ring, copy] { server_->offer(ring, copy.data(), copy.size()); });
  }
  template <typename R>
  void offer(ForwardRing ring, const R& r) {
    offer(ring, &r, sizeof(r));
  }
  [[nodiscard]] const std::string& error() const { return error_; }
  std::vector<FailureRecord> failures() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
  }
  // Anomalous log lines reported held back, summed.
  uint64_t held_back() const { return held_back_.load(); }
  // The reasons of every rejection so far, in order; the notes logged.
  std::vector<std::string> rejected() {
    std::lock_guard<std::mutex> lock(mutex_);
    return rejected_;
  }
  std::vector<std::string> notes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return notes_;
  }
  // What the server asks of its probe-mode hook ("" = an exporter that
  // does not know the mode).
  void set_probe_mode(std::string mode) {
    std::lock_guard<std::mutex> lock(mutex_);
    probe_mode_ = std::move(mode);
  }
  // Runs `f` on the server's thread and waits for its answer.
  bool ask(std::function<bool(const RegistrationServer&)> f) {
    std::promise<bool> answer;
    auto done = answer.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back([this, &f, &answer] { answer.set_value(f(*server_)); });
    }
    return done.get();
  }
  std::atomic<bool> nfs_{false};
  std::atomic<int> drains_{0};
  std::atomic<int> tracing_started_{0};
  std::atomic<uint64_t> held_back_{0};

 private:
  std::unique_ptr<RegistrationServer> server_;
  std::string error_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  std::vector<FailureRecord> failures_;
  std::vector<std::string> rejected_;
  std::vector<std::string> notes_;
  std::string probe_mode_ = "file_layer";
};

}  // namespace ckpt::test
