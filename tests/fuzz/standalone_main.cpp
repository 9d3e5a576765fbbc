// Runs a fuzz target without libFuzzer (GCC builds, the test suite): every file of the corpus,
// then a fixed number of deterministic mutations of them (bit flips, byte changes, cuts,
// repeats, splices). scripts/fuzz.sh builds the same targets with libFuzzer for long runs.
//   fuzz_TARGET CORPUS_DIR [ITERATIONS]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void mutate(std::vector<std::uint8_t>& input, const std::vector<std::uint8_t>& other,
            std::mt19937_64& rng) {
  const auto pick = [&](std::size_t n) { return n ? std::size_t(rng() % n) : 0; };
  switch (rng() % 6) {
    case 0:  // flip a bit
      if (!input.empty()) input[pick(input.size())] ^= std::uint8_t(1u << (rng() % 8));
      break;
    case 1:  // an interesting byte
      if (!input.empty()) {
        constexpr std::uint8_t kBytes[] = {0, 1, 0x7F, 0x80, 0xFF};
        input[pick(input.size())] = kBytes[rng() % 5];
      }
      break;
    case 2:  // cut
      input.resize(pick(input.size() + 1));
      break;
    case 3:  // repeat a piece
      if (!input.empty() && input.size() < 70000) {
        const std::size_t at = pick(input.size());
        const std::size_t n = std::min<std::size_t>(pick(64) + 1, input.size() - at);
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                     input.begin() + static_cast<std::ptrdiff_t>(at),
                     input.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      break;
    case 4:  // splice with another input
      if (!other.empty()) {
        input.resize(pick(input.size() + 1));
        const std::size_t from = pick(other.size());
        input.insert(input.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      }
      break;
    default:  // a 32-bit field set to an extreme
      if (input.size() >= 4) {
        const std::size_t at = pick(input.size() - 3);
        const std::uint32_t v = rng() % 2 ? 0xFFFFFFFFu : 0x7FFFFFFFu;
        for (int k = 0; k < 4; ++k) input[at + k] = std::uint8_t(v >> (8 * k));
      }
      break;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const long iterations = argc > 2 ? std::stol(argv[2]) : 2000;
  std::vector<std::vector<std::uint8_t>> corpus;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    if (entry.is_regular_file()) corpus.push_back(read_file(entry.path()));
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "%s: empty corpus %s\n", argv[0], argv[1]);
    return 2;
  }
  std::sort(corpus.begin(), corpus.end());  // directory order is not stable
  for (const auto& input : corpus) LLVMFuzzerTestOneInput(input.data(), input.size());
  std::mt19937_64 rng(20261121);
  for (long i = 0; i < iterations; ++i) {
    std::vector<std::uint8_t> input = corpus[rng() % corpus.size()];
    const int rounds = 1 + int(rng() % 4);
    for (int r = 0; r < rounds; ++r) mutate(input, corpus[rng() % corpus.size()], rng);
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("%s: %zu corpus inputs and %ld mutations, no finding\n", argv[0], corpus.size(),
              iterations);
  return 0;
}
