#pragma once
// A schema that uses every Avro type plus Iceberg's id attributes, and a deterministic generator
// of values with the edge cases the issue lists (nulls, empty strings, zero bytes, values over
// 1 MiB, unicode, 0-20 headers with duplicate names). Shared by the unit tests and the
// python3-avro interop program.

#include "format/avro/datum.h"

#include <cstdint>
#include <limits>
#include <string>

namespace floe::avro::test_data {

inline constexpr const char* sample_schema_json = R"({"type":"record","name":"sample","namespace":"floe.test","fields":[
 {"name":"id","type":"long","field-id":1},
 {"name":"small","type":"int","field-id":2},
 {"name":"flag","type":"boolean","field-id":3},
 {"name":"ratio","type":"float","field-id":4},
 {"name":"score","type":"double","field-id":5},
 {"name":"name","type":"string","field-id":6},
 {"name":"payload","type":["null","bytes"],"default":null,"field-id":7},
 {"name":"digest","type":{"type":"fixed","name":"md5","size":16},"field-id":8},
 {"name":"color","type":{"type":"enum","name":"color","symbols":["RED","GREEN","BLUE"]},"field-id":9},
 {"name":"tags","type":{"type":"array","items":"string","element-id":11},"field-id":10},
 {"name":"attrs","type":{"type":"map","values":["null","long"],"key-id":13,"value-id":14},"field-id":12},
 {"name":"headers","type":["null",{"type":"array","element-id":16,"items":{"type":"record","name":"header","fields":[{"name":"key","type":"string","field-id":17},{"name":"value","type":["null","bytes"],"field-id":18}]}}],"default":null,"field-id":15},
 {"name":"bounds","type":{"type":"array","logicalType":"map","items":{"type":"record","name":"k19_v20","fields":[{"name":"key","type":"int","field-id":19},{"name":"value","type":"bytes","field-id":20}]}},"field-id":21},
 {"name":"choice","type":["null","int","string","header"],"field-id":22}
]})";

class sample_gen {
public:
    explicit sample_gen(uint64_t seed) : _s(seed) {}

    uint64_t next_u64() {
        uint64_t z = (_s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint64_t below(uint64_t n) { return next_u64() % n; }

    std::string random_bytes(size_t n) {
        std::string s(n, '\0');
        for (auto& c : s) c = static_cast<char>(below(256));
        return s;
    }
    std::string word() {
        static const char* words[] = {"", "a", "héllo", "日本語", "emoji 😀", "tab\tnew\nline",
                                      "quote\"back\\slash", "key", "Content-Type", "x-trace"};
        return words[below(std::size(words))];
    }

    datum header() {
        // Few distinct names so duplicates are common.
        static const char* names[] = {"k", "dup", "Content-Type", "ü"};
        auto v = below(4) == 0 ? datum::null() : datum::bytes(random_bytes(below(12)));
        return datum::record({datum::string(names[below(std::size(names))]), std::move(v)});
    }

    /// Record i; i == big_index carries a 1.5 MiB payload.
    datum record(size_t i, size_t big_index = SIZE_MAX) {
        static const int64_t longs[] = {0, -1, 1, std::numeric_limits<int64_t>::min(),
                                        std::numeric_limits<int64_t>::max(), 1767225600000};
        static const int32_t ints[] = {0, -1, std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max(), 63, 64, -65};
        std::vector<datum> f;
        f.push_back(datum::int64(i < std::size(longs) ? longs[i] : static_cast<int64_t>(next_u64())));
        f.push_back(datum::int32(i < std::size(ints) ? ints[i] : static_cast<int32_t>(next_u64())));
        f.push_back(datum::boolean(i % 2 == 1));
        f.push_back(datum::float32(static_cast<float>(static_cast<int64_t>(below(2000000)) - 1000000) / 64.0f));
        static const double doubles[] = {0.0, -2.5, 1e308, 5e-324, 3.141592653589793};
        f.push_back(datum::float64(i < std::size(doubles) ? doubles[i]
                                                         : static_cast<double>(next_u64()) / 7.0));
        f.push_back(datum::string(i % 3 == 0 ? word() : word() + std::to_string(i)));
        if (i == big_index) f.push_back(datum::bytes(random_bytes(1536 * 1024)));
        else if (i % 5 == 0) f.push_back(datum::null());
        else if (i % 5 == 1) f.push_back(datum::bytes(""));
        else if (i % 5 == 2) f.push_back(datum::bytes(std::string("\0\0a\0", 4)));
        else f.push_back(datum::bytes(random_bytes(below(300))));
        f.push_back(datum::fixed(random_bytes(16)));
        f.push_back(datum::enumeration(static_cast<int32_t>(i % 3)));
        auto tags = datum::array();
        for (size_t k = below(6); k > 0; --k) tags.push(datum::string(word()));
        f.push_back(std::move(tags));
        auto attrs = datum::map();
        for (size_t k = 0, n = below(5); k < n; ++k)
            attrs.put("a" + std::to_string(k) + word(),
                      below(3) == 0 ? datum::null() : datum::int64(static_cast<int64_t>(next_u64())));
        f.push_back(std::move(attrs));
        if (i % 7 == 3) f.push_back(datum::null());
        else {
            auto hs = datum::array();
            for (size_t k = below(21); k > 0; --k) hs.push(header());
            f.push_back(std::move(hs));
        }
        auto bounds = datum::array();
        for (size_t k = below(4); k > 0; --k)
            bounds.push(datum::record({datum::int32(static_cast<int32_t>(k)),
                                       datum::bytes(random_bytes(below(9)))}));
        f.push_back(std::move(bounds));
        switch (i % 4) {
        case 0: f.push_back(datum::null()); break;
        case 1: f.push_back(datum::int32(static_cast<int32_t>(i))); break;
        case 2: f.push_back(datum::string(word())); break;
        default: f.push_back(header()); break;
        }
        return datum::record(std::move(f));
    }

private:
    uint64_t _s;
};

} // namespace floe::avro::test_data
