// listing1.cpp: the paper's Listing 1, a non-POD class (virtual destructor, so a vtable
// pointer, and a 4-byte gap between c and d), sent through its member functions: pack and
// unpack move the 20 bytes of a, b, c and d, never the vtable or the gap. Arrays of 1, 3 and
// 10000 objects go around a ring (the 200 KB packed part crosses fragment boundaries in the
// middle of objects); the receivers' objects keep their own vtables. Then the paper's
// struct-vec: the same members packed plus a vector as a region, again through members.
#include <mpicd/custom.hpp>

#include "check.hpp"

#include <cstdio>
#include <type_traits>
#include <vector>

struct A {
    int a, b, c;
    // 4B gap
    double d;
    A(int a, int b, int c, double d) : a(a), b(b), c(c), d(d) {}
    virtual ~A() = default;
    // size of data members to pack
    constexpr static size_t pack_size = sizeof(int) * 3 + sizeof(double);

    virtual int kind() const { return 1; }
    void pack(mpicd::packer &out) const {
        out.put(a);
        out.put(b);
        out.put(c);
        out.put(d);
    }
    void unpack(mpicd::unpacker &in) {
        in.get(a);
        in.get(b);
        in.get(c);
        in.get(d);
    }
};

// A derived class: the receiver's dynamic type survives, only the members travel.
struct B : A {
    using A::A;
    int kind() const override { return 2; }
};

// The paper's struct-vec in C++: A's members packed, a vector sent as a region, all through
// member functions.
struct SV : A {
    std::vector<int> data;
    SV(int who, int i, size_t n) : A(who, i, who * i, who + i / 8.0), data(n) {
        for (size_t j = 0; j < n; j++) data[j] = who * 100000 + i * 1000 + static_cast<int>(j);
    }
    void regions(mpicd::region_list &r) const { r.add(data.data(), data.size()); }
};

static_assert(!std::is_trivially_copyable_v<A>, "A is not POD");
static_assert(sizeof(A) >= 32, "A holds a vtable pointer and a gap");

static A make(int who, int i) { return A(who, i, who * i, who + i / 8.0); }

static void ring(int n, int tag) {
    int me = test::rank(), size = test::size();
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    MPI_Datatype t = mpicd::custom_type<A>();
    std::vector<A> out;
    for (int i = 0; i < n; i++) out.push_back(make(me, i));
    std::vector<B> in(static_cast<size_t>(n), B(-1, -1, -1, -1.0));

    MPI_Request r;
    OK(MPI_Isend(out.data(), n, t, next, tag, MPI_COMM_WORLD, &r));
    // The packed size of the matched message: 20 bytes per object, no gap, no vtable.
    MPI_Message m;
    MPI_Status s;
    OK(MPI_Mprobe(prev, tag, MPI_COMM_WORLD, &m, &s));
    mpicd::shape sh = mpicd::message_shape<A>(m);
    CHECK(sh.packed_bytes == static_cast<MPI_Count>(n) * 20 && sh.region_count() == 0);
    std::vector<A> in_a(static_cast<size_t>(n), A(-1, -1, -1, -1.0));
    OK(MPI_Mrecv(in_a.data(), n, t, &m, &s));
    int count = -1;
    OK(MPI_Get_count(&s, t, &count));
    CHECK(count == n && s.MPI_SOURCE == prev);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) {
        A want = make(prev, i);
        const A &got = in_a[static_cast<size_t>(i)];
        CHECK(got.a == want.a && got.b == want.b && got.c == want.c && got.d == want.d);
        CHECK(got.kind() == 1);
    }

    // Sendrecv into a derived class through a type built for B (its members are A's).
    MPI_Datatype tb = mpicd::custom_type<B>();
    OK(MPI_Sendrecv(out.data(), n, t, next, tag + 1, in.data(), n, tb, prev, tag + 1,
                    MPI_COMM_WORLD, &s));
    for (int i = 0; i < n; i++) {
        A want = make(prev, i);
        const B &got = in[static_cast<size_t>(i)];
        CHECK(got.a == want.a && got.b == want.b && got.c == want.c && got.d == want.d);
        CHECK(got.kind() == 2);
    }
    OK(MPI_Type_free(&tb));
    OK(MPI_Type_free(&t));
}

int main(int argc, char **argv) {
    test::init(&argc, &argv);
    ring(1, 10);
    ring(3, 20);
    ring(10000, 30);

    {  // struct-vec: 3 objects of 2048 ints each, in a ring
        int me = test::rank(), size = test::size(), prev = (me + size - 1) % size;
        MPI_Datatype t = mpicd::custom_type<SV>();
        std::vector<SV> out, in;
        for (int i = 0; i < 3; i++) {
            out.emplace_back(me, i, 2048);
            in.emplace_back(-1, -1, 2048);
        }
        OK(MPI_Sendrecv(out.data(), 3, t, (me + 1) % size, 35, in.data(), 3, t, prev, 35,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++) {
            SV want(prev, i, 2048);
            const SV &got = in[static_cast<size_t>(i)];
            CHECK(got.a == want.a && got.b == want.b && got.c == want.c && got.d == want.d);
            CHECK(got.data == want.data);
        }
        OK(MPI_Type_free(&t));
    }

    // A receive count too small for what arrives is an error, not an overrun.
    if (test::size() >= 2 && test::rank() < 2) {
        MPI_Datatype t = mpicd::custom_type<A>();
        std::vector<A> v(4, A(0, 0, 0, 0.0));
        if (test::rank() == 0) {
            OK(MPI_Send(v.data(), 4, t, 1, 40, MPI_COMM_WORLD));
        } else {
            std::vector<A> small(2, A(7, 7, 7, 7.0));
            int rc = MPI_Recv(small.data(), 2, t, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(test::error_class(rc) == MPI_ERR_TRUNCATE);
        }
        OK(MPI_Type_free(&t));
    }
    test::finish("listing1");
    return 0;
}
