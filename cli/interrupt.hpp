// Ctrl-C (SIGINT, and SIGTERM) on the command line (docs/cli.md "Interrupts"): nothing computed
// is lost.
// - A resumable run (one with a checkpoint folder) stops at once: every finished unit is already
//   in the folder (each written atomically), and the message names the folder and the command
//   that continues the run (the same command with --resume). Exit 130.
// - A run whose library call can stop between units and return what finished (icl simulate:
//   the finished seeds) asks it to: the first Ctrl-C sets a flag that the run's progress
//   function turns into a stop; a second Ctrl-C ends the program at once (exit 130).
#pragma once
#include <string>

namespace icl::cli {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it

// From now on, Ctrl-C prints "icl: interrupted: the finished units are kept in <folder>;
// continue with: <command>" on stderr and exits 130. Replaces an earlier call's message.
void on_interrupt_keep_checkpoint(const std::string& folder, const std::string& resume_command);
// Back to the default action (the run is complete, its checkpoint removed).
void on_interrupt_default();

// From now on, the first Ctrl-C prints `what_happens` ("finishing the seeds in progress, then
// writing the finished ones") and sets interrupt_requested(); the second exits 130 at once.
void on_interrupt_finish_units(const std::string& what_happens);
bool interrupt_requested();

}  // namespace icl::cli
