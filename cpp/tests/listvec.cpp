// listvec.cpp: std::list<std::vector<int>> received WITHOUT knowing its shape. The traits pack
// the list length, send each vector as a region, and resize the receiver's list from the
// sender's shape (the MPIX resize hook that custom_type installs): a plain MPI_Recv or
// MPI_Irecv from MPI_ANY_SOURCE into an empty list. A second type without resize takes the
// other route: MPI_Mprobe, mpicd::message_shape, size the list by hand, MPI_Mrecv.
#include <mpicd/custom.hpp>

#include "check.hpp"

#include <cstdint>
#include <cstdio>
#include <list>
#include <vector>

using lv = std::list<std::vector<int>>;

template <>
struct mpicd::custom_traits<lv> {
    static void pack(const lv &x, mpicd::packer &out) {
        out.put(static_cast<std::uint64_t>(x.size()));
    }
    static void unpack(lv &x, mpicd::unpacker &in) {
        if (in.get<std::uint64_t>() != x.size())
            throw mpicd::error(MPI_ERR_TRUNCATE, "list length differs");
    }
    static void regions(const lv &x, mpicd::region_list &r) {
        for (const auto &v : x) r.add(v.data(), v.size());
    }
    // One vector per region, as long as the sender's.
    static void resize(lv &x, const mpicd::shape &s) {
        x.resize(s.region_count());
        size_t i = 0;
        for (auto &v : x) v.resize(s.region_length<int>(i++));
    }
};

// The same list, with no resize: the receiver sizes it from MPIX_Message_shape.
struct plain_list {
    lv items;
};

template <>
struct mpicd::custom_traits<plain_list> {
    static void pack(const plain_list &x, mpicd::packer &out) {
        mpicd::custom_traits<lv>::pack(x.items, out);
    }
    static void unpack(plain_list &x, mpicd::unpacker &in) {
        mpicd::custom_traits<lv>::unpack(x.items, in);
    }
    static void regions(const plain_list &x, mpicd::region_list &r) {
        mpicd::custom_traits<lv>::regions(x.items, r);
    }
};

// Rank `who`'s list: `who + 2` vectors of varied lengths (one empty, one of 1 MB) ...
static lv make(int who, int round) {
    lv x;
    int n = who + 2 + round;
    for (int i = 0; i < n; i++) {
        size_t len = i == 1 ? 0 : (i == 2 ? (1u << 18) : static_cast<size_t>(who * 7 + i * 13 + round));
        std::vector<int> v(len);
        for (size_t j = 0; j < len; j++) v[j] = who * 100000 + i * 1000 + static_cast<int>(j) + round;
        x.push_back(std::move(v));
    }
    return x;
}

int main(int argc, char **argv) {
    test::init(&argc, &argv);
    int me = test::rank(), size = test::size();
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    MPI_Datatype t = mpicd::custom_type<lv>();

    // Blocking receive from any source into an empty list.
    for (int round = 0; round < 3; round++) {
        lv out = make(me, round);
        MPI_Request r;
        OK(MPI_Isend(&out, 1, t, next, 200 + round, MPI_COMM_WORLD, &r));
        lv in;
        MPI_Status s;
        OK(MPI_Recv(&in, 1, t, MPI_ANY_SOURCE, 200 + round, MPI_COMM_WORLD, &s));
        CHECK(s.MPI_SOURCE == prev);
        CHECK(in == make(prev, round));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }

    // Non-blocking: every rank sends its list to every other; receives into lists that hold
    // stale, wrongly sized vectors (resize fixes them).
    {
        lv out = make(me, 5);
        std::vector<MPI_Request> reqs;
        std::vector<lv> in(static_cast<size_t>(size), lv(3, std::vector<int>(5, -7)));
        for (int p = 0; p < size; p++) {
            if (p == me) continue;
            reqs.emplace_back();
            OK(MPI_Irecv(&in[static_cast<size_t>(p)], 1, t, p, 210, MPI_COMM_WORLD, &reqs.back()));
        }
        for (int p = 0; p < size; p++) {
            if (p == me) continue;
            reqs.emplace_back();
            OK(MPI_Isend(&out, 1, t, p, 210, MPI_COMM_WORLD, &reqs.back()));
        }
        OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
        for (int p = 0; p < size; p++)
            if (p != me) CHECK(in[static_cast<size_t>(p)] == make(p, 5));
    }

    // Matched probe, the shape, a list sized by hand, then the matched receive.
    {
        MPI_Datatype tp = mpicd::custom_type<plain_list>();
        plain_list out{make(me, 1)};
        MPI_Request r;
        OK(MPI_Isend(&out, 1, tp, next, 220, MPI_COMM_WORLD, &r));
        MPI_Message m;
        MPI_Status s;
        OK(MPI_Mprobe(MPI_ANY_SOURCE, 220, MPI_COMM_WORLD, &m, &s));
        CHECK(s.MPI_SOURCE == prev);
        mpicd::shape sh = mpicd::message_shape<plain_list>(m);
        lv want = make(prev, 1);
        CHECK(sh.region_count() == want.size());
        CHECK(sh.packed_bytes == static_cast<MPI_Count>(sizeof(std::uint64_t)));
        plain_list in;
        size_t i = 0;
        for (const auto &v : want) {  // (a region's type is a 4-byte integer type)
            CHECK(sh.region_bytes(i) == v.size() * sizeof(int));
            in.items.emplace_back(sh.region_length<int>(i++));
        }
        OK(MPI_Mrecv(&in, 1, tp, &m, &s));
        CHECK(in.items == want);
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Type_free(&tp));
    }

    // resize sizes one object: a receive of two into empty lists is not resized, so it is
    // truncated (an error, not an overrun), and the sender is not left hanging.
    if (size >= 2 && me < 2) {
        lv two[2] = {make(me, 0), make(me, 1)};
        if (me == 0) {
            int rc = MPI_Send(two, 2, t, 1, 230, MPI_COMM_WORLD);
            (void)rc;  // the sender may or may not learn of the receiver's failure
        } else {
            lv got[2];
            int rc = MPI_Recv(got, 2, t, 0, 230, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(test::error_class(rc) == MPI_ERR_TRUNCATE);
            CHECK(got[0].empty() && got[1].empty());
        }
    }

    OK(MPI_Type_free(&t));
    test::finish("listvec");
    return 0;
}
