// vecvec.cpp: std::vector<std::vector<int>> through a custom_traits specialisation: the outer
// and inner sizes are packed, each inner vector's ints are a region (sent without a copy).
// The receiver knows the shape and sizes its vectors first; unpack checks the sizes it gets.
// Shapes: empty, with empty inner vectors, many small inners (small regions, a packed part of
// 160 KB), a few large inners (4 MB regions); one object and arrays of three in one message.
// Also a type with regions only (no pack/unpack).
#include <mpicd/custom.hpp>

#include "check.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

using vv = std::vector<std::vector<int>>;

template <>
struct mpicd::custom_traits<vv> {
    static void pack(const vv &x, mpicd::packer &out) {
        out.put(static_cast<std::uint64_t>(x.size()));
        for (const auto &v : x) out.put(static_cast<std::uint64_t>(v.size()));
    }
    static void unpack(vv &x, mpicd::unpacker &in) {
        if (in.get<std::uint64_t>() != x.size())
            throw mpicd::error(MPI_ERR_TRUNCATE, "outer size differs");
        for (const auto &v : x)
            if (in.get<std::uint64_t>() != v.size())
                throw mpicd::error(MPI_ERR_TRUNCATE, "inner size differs");
    }
    static void regions(const vv &x, mpicd::region_list &r) {
        for (const auto &v : x) r.add(v.data(), v.size());
    }
    // Optional: saves the counting run of pack that measures each object.
    static std::size_t packed_size(const vv &x) { return 8 * (1 + x.size()); }
};

// A type with regions only (no packed part): samples of known length.
struct samples {
    std::vector<double> v;
    std::vector<short> s;
};

template <>
struct mpicd::custom_traits<samples> {
    static void regions(const samples &x, mpicd::region_list &r) {
        r.add(x.v.data(), x.v.size());
        r.add(x.s.data(), x.s.size());
    }
};

// The shapes: outer length and inner lengths, by case.
static std::vector<size_t> lengths(int which, int who) {
    switch (which) {
        case 0: return {};
        case 1: return {0, 3, 0, 0, 7, 0};
        case 2: return std::vector<size_t>(20000, static_cast<size_t>(1 + who % 3));
        case 3: return {1u << 20, 5, 1u << 20, 1u << 19};
        default: return {static_cast<size_t>(17 + who), 0, 1000};
    }
}

static vv make(int which, int who, bool fill) {
    vv x;
    size_t k = 0;
    for (size_t n : lengths(which, who)) {
        std::vector<int> v(n, -1);
        if (fill)
            for (size_t j = 0; j < n; j++) v[j] = who * 1000003 + static_cast<int>(k * 31 + j);
        x.push_back(std::move(v));
        k++;
    }
    return x;
}

static void exchange(int which, int objects, int tag) {
    int me = test::rank(), size = test::size();
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    MPI_Datatype t = mpicd::custom_type<vv>();
    std::vector<vv> out, in;
    for (int o = 0; o < objects; o++) {
        out.push_back(make(which + o, me, true));
        in.push_back(make(which + o, prev, false));
    }
    MPI_Request r[2];
    OK(MPI_Irecv(in.data(), objects, t, prev, tag, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Isend(out.data(), objects, t, next, tag, MPI_COMM_WORLD, &r[1]));
    MPI_Status s[2];
    OK(MPI_Waitall(2, r, s));
    int count = -1;
    OK(MPI_Get_count(&s[0], t, &count));
    CHECK(count == objects && s[0].MPI_SOURCE == prev && s[0].MPI_TAG == tag);
    for (int o = 0; o < objects; o++) CHECK(in[static_cast<size_t>(o)] == make(which + o, prev, true));
    OK(MPI_Type_free(&t));
}

int main(int argc, char **argv) {
    test::init(&argc, &argv);
    for (int which = 0; which < 5; which++) exchange(which, 1, 100 + which);
    exchange(0, 3, 110);
    exchange(2, 3, 111);

    {  // regions only
        int me = test::rank(), size = test::size();
        MPI_Datatype t = mpicd::custom_type<samples>();
        samples out[2], in[2];
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 1000 * (i + 1); j++) out[i].v.push_back(me + j * 0.5);
            for (int j = 0; j < 7; j++) out[i].s.push_back(static_cast<short>(me * 10 + j + i));
            in[i].v.assign(out[i].v.size(), 0.0);
            in[i].s.assign(out[i].s.size(), 0);
        }
        int prev = (me + size - 1) % size;
        OK(MPI_Sendrecv(out, 2, t, (me + 1) % size, 115, in, 2, t, prev, 115, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++) {
            for (size_t j = 0; j < in[i].v.size(); j++) CHECK(in[i].v[j] == prev + j * 0.5);
            for (size_t j = 0; j < in[i].s.size(); j++)
                CHECK(in[i].s[j] == static_cast<short>(prev * 10 + static_cast<int>(j) + i));
        }
        OK(MPI_Type_free(&t));
    }

    // A receiver whose vectors are shorter than what arrives: an error, not an overrun.
    if (test::size() >= 2 && test::rank() < 2) {
        MPI_Datatype t = mpicd::custom_type<vv>();
        if (test::rank() == 0) {
            vv x = make(4, 0, true);
            OK(MPI_Send(&x, 1, t, 1, 120, MPI_COMM_WORLD));
        } else {
            vv x = make(4, 0, false);
            x[2].resize(10);
            int rc = MPI_Recv(&x, 1, t, 0, 120, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(test::error_class(rc) == MPI_ERR_TRUNCATE);
        }
        OK(MPI_Type_free(&t));
    }
    test::finish("vecvec");
    return 0;
}
