// map.cpp: std::map<std::string, std::vector<double>> received without knowing its shape. The
// packed part holds the number of entries and every key; each vector's doubles are a region.
// resize cannot know the keys (they are in the packed part, which arrives after the regions
// are set up), so it inserts one vector per region under placeholder keys that sort in
// region order; unpack then gives each node its real key with std::map::extract, which moves
// no vector storage, so the regions stay where MPI writes them.
#include <mpicd/custom.hpp>

#include "check.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using dict = std::map<std::string, std::vector<double>>;

template <>
struct mpicd::custom_traits<dict> {
    static void pack(const dict &x, mpicd::packer &out) {
        out.put(static_cast<std::uint64_t>(x.size()));
        for (const auto &kv : x) out.put(kv.first);
    }
    static void unpack(dict &x, mpicd::unpacker &in) {
        auto n = in.get<std::uint64_t>();
        if (n != x.size()) throw mpicd::error(MPI_ERR_TRUNCATE, "entry count differs");
        std::vector<dict::node_type> nodes;
        while (!x.empty()) nodes.push_back(x.extract(x.begin()));  // in region order
        for (auto &node : nodes) {
            in.get(node.key());
            if (!x.insert(std::move(node)).inserted)
                throw mpicd::error(MPI_ERR_OTHER, "duplicate key");
        }
    }
    static void regions(const dict &x, mpicd::region_list &r) {
        for (const auto &kv : x) r.add(kv.second.data(), kv.second.size());
    }
    static void resize(dict &x, const mpicd::shape &s) {
        x.clear();
        for (size_t i = 0; i < s.region_count(); i++)
            x.emplace(placeholder(i), std::vector<double>(s.region_length<double>(i)));
    }
    // A key that sorts by i: a NUL, then i big-endian.
    static std::string placeholder(size_t i) {
        std::string k(1 + sizeof(std::uint64_t), '\0');
        for (size_t b = 0; b < sizeof(std::uint64_t); b++)
            k[1 + b] = static_cast<char>((static_cast<std::uint64_t>(i) >> (8 * (7 - b))) & 0xff);
        return k;
    }
};

// Rank `who`'s dictionary: keys of varied length (one with a NUL inside, one 300 characters),
// an empty vector, and one of 2^19 doubles (4 MB).
static dict make(int who, int round) {
    dict d;
    int n = 3 + who + round;
    for (int i = 0; i < n; i++) {
        std::string key = "k" + std::to_string(who) + "." + std::to_string(i * 37 % n);
        if (i == 1) key += std::string("\0nul", 4);
        if (i == 2) key += std::string(300, 'x');
        size_t len = i == 0 ? 0 : (i == 3 ? (1u << 19) : static_cast<size_t>(i * 11 + who));
        std::vector<double> v(len);
        for (size_t j = 0; j < len; j++) v[j] = who + i * 0.5 + static_cast<double>(j) * 0.25;
        d.emplace(key, std::move(v));
    }
    return d;
}

int main(int argc, char **argv) {
    test::init(&argc, &argv);
    int me = test::rank(), size = test::size();
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    MPI_Datatype t = mpicd::custom_type<dict>();

    for (int round = 0; round < 3; round++) {
        dict out = make(me, round);
        dict in{{"stale", {1.0, 2.0}}};
        MPI_Status s;
        OK(MPI_Sendrecv(&out, 1, t, next, 300 + round, &in, 1, t, MPI_ANY_SOURCE, 300 + round,
                        MPI_COMM_WORLD, &s));
        CHECK(s.MPI_SOURCE == prev);
        CHECK(in == make(prev, round));
    }

    // The empty map.
    {
        dict out, in{{"x", {1.0}}};
        OK(MPI_Sendrecv(&out, 1, t, next, 310, &in, 1, t, prev, 310, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        CHECK(in.empty());
    }

    // Rank 0 gathers every other rank's map with non-blocking receives.
    if (me == 0) {
        std::vector<dict> in(static_cast<size_t>(size));
        std::vector<MPI_Request> reqs(static_cast<size_t>(size - 1));
        for (int p = 1; p < size; p++)
            OK(MPI_Irecv(&in[static_cast<size_t>(p)], 1, t, p, 320, MPI_COMM_WORLD,
                         &reqs[static_cast<size_t>(p - 1)]));
        OK(MPI_Waitall(size - 1, reqs.data(), MPI_STATUSES_IGNORE));
        for (int p = 1; p < size; p++) CHECK(in[static_cast<size_t>(p)] == make(p, 7));
    } else {
        dict out = make(me, 7);
        OK(MPI_Ssend(&out, 1, t, 0, 320, MPI_COMM_WORLD));
    }

    OK(MPI_Type_free(&t));
    test::finish("map");
    return 0;
}
