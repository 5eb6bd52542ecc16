#include "cli/interrupt.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>

namespace icl::cli {
namespace {

// The handlers only read this buffer and call write(2) and _exit(2) (async-signal-safe); it is
// filled before the handler is installed and never while one is installed.
char g_message[4096];
std::size_t g_length = 0;
std::atomic<bool> g_requested{false};

void set_message(const std::string& text) {
  g_length = std::min(text.size(), sizeof g_message);
  std::memcpy(g_message, text.data(), g_length);
}

void install(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void print_message() { [[maybe_unused]] const auto n = write(STDERR_FILENO, g_message, g_length); }

void print_and_exit(int) {
  print_message();
  _exit(kExitInterrupted);
}

void request_stop(int) {
  if (g_requested.exchange(true)) _exit(kExitInterrupted);  // the second Ctrl-C
  print_message();
}

}  // namespace

void on_interrupt_keep_checkpoint(const std::string& folder, const std::string& resume_command) {
  install(SIG_DFL);  // no handler reads the buffer while it changes
  set_message("\nicl: interrupted: the finished units are kept in " + folder +
              "; continue with:\n  " + resume_command + "\n");
  install(print_and_exit);
}

void on_interrupt_default() { install(SIG_DFL); }

void on_interrupt_finish_units(const std::string& what_happens) {
  install(SIG_DFL);
  g_requested = false;
  set_message("\nicl: interrupt: " + what_happens + " (Ctrl-C again to stop at once)\n");
  install(request_stop);
}

bool interrupt_requested() { return g_requested.load(); }

}  // namespace icl::cli
