// Replay driver for libFuzzer targets in builds without -fsanitize=fuzzer (g++).
// Feeds every file of the seed corpus directories given on the command line, then a fixed
// number of deterministic mutations of them (bit flips, truncations, splices, length-field
// smashing), so every build runs each decoder on hostile input. Exits non-zero only if the
// target crashes (which aborts the process) — the target itself must never crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    std::vector<std::vector<uint8_t>> seeds;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path dir(argv[i]);
        if (!std::filesystem::is_directory(dir)) continue;
        for (auto& e : std::filesystem::recursive_directory_iterator(dir)) {
            if (!e.is_regular_file()) continue;
            std::ifstream in(e.path(), std::ios::binary);
            seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
    }
    if (seeds.empty()) seeds.push_back({});
    size_t runs = 0;
    for (auto& s : seeds) {
        LLVMFuzzerTestOneInput(s.data(), s.size());
        ++runs;
    }
    std::mt19937_64 rng(0xF10E);
    constexpr int mutations = 20000;
    for (int i = 0; i < mutations; ++i) {
        auto input = seeds[rng() % seeds.size()];
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < edits; ++k) {
            switch (rng() % 5) {
            case 0: // flip a bit
                if (!input.empty()) input[rng() % input.size()] ^= uint8_t(1u << (rng() % 8));
                break;
            case 1: // truncate
                if (!input.empty()) input.resize(rng() % input.size());
                break;
            case 2: // smash 4 bytes with an extreme value (lying lengths)
                if (input.size() >= 4) {
                    size_t at = rng() % (input.size() - 3);
                    uint32_t v = (rng() & 1) ? 0xFFFFFFFFu : uint32_t(0x7FFFFFF0u + rng() % 16);
                    for (int b = 0; b < 4; ++b) input[at + b] = uint8_t(v >> (8 * b));
                }
                break;
            case 3: { // splice part of another seed
                auto& other = seeds[rng() % seeds.size()];
                if (!other.empty()) {
                    size_t from = rng() % other.size();
                    size_t len = 1 + rng() % (other.size() - from);
                    size_t at = input.empty() ? 0 : rng() % input.size();
                    input.insert(input.begin() + long(at), other.begin() + long(from),
                                 other.begin() + long(from + len));
                }
                break;
            }
            default: // random byte
                if (!input.empty()) input[rng() % input.size()] = uint8_t(rng());
            }
        }
        LLVMFuzzerTestOneInput(input.data(), input.size());
        ++runs;
    }
    std::printf("replayed %zu inputs (%zu seeds) without a crash\n", runs, seeds.size());
    return 0;
}
