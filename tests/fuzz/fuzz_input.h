// What every fuzz target shares: the input as text, and the entry point's
// signature. In the fuzz build each target is its own libFuzzer binary; in
// the normal build tests/fuzz/CMakeLists.txt renames LLVMFuzzerTestOneInput
// per target so one replay binary (replay_main.cpp) holds them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace ckpt::fuzz

// A target either returns or crashes: every parser under test must turn bad
// input into an error value, never an exception or an abort.
#define CKPT_FUZZ_TARGET extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
