// exceptions.cpp: a C++ exception in a callback never crosses into the runtime; it fails the
// operation with an MPI error code, and the other side does not hang. Ranks pair up (0 with
// 1, 2 with 3, ...); in each case the even rank sends, the odd rank receives. Sender-side:
// pack throws at the first object, pack throws in a later fragment, pack throws mpicd::error
// with its own code, pack throws std::bad_alloc, regions throws, a non-blocking send whose
// pack throws. Receiver-side: unpack throws, resize throws. After each, a clean message goes
// through on the same pair.
#include <mpicd/custom.hpp>

#include "check.hpp"

#include <cstdint>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

struct item {
    int value = 0;
    std::vector<int> data;
};

enum class fault { none, pack_runtime, pack_code, pack_bad_alloc, pack_int, regions, unpack, resize };

static fault armed = fault::none;
static int poison = -1;  // the value whose pack or unpack throws

template <>
struct mpicd::custom_traits<item> {
    static void pack(const item &x, mpicd::packer &out) {
        if (x.value == poison) {
            switch (armed) {
                case fault::pack_runtime: throw std::runtime_error("pack failed on purpose");
                case fault::pack_code: throw mpicd::error(MPI_ERR_BUFFER, "bad buffer on purpose");
                case fault::pack_bad_alloc: throw std::bad_alloc();
                case fault::pack_int: throw 42;
                default: break;
            }
        }
        out.put(x.value);
        out.put(static_cast<std::uint64_t>(x.data.size()));
    }
    static void unpack(item &x, mpicd::unpacker &in) {
        in.get(x.value);
        if (armed == fault::unpack && x.value == poison) throw std::logic_error("unpack failed on purpose");
        if (in.get<std::uint64_t>() != x.data.size()) throw mpicd::error(MPI_ERR_TRUNCATE, "size");
    }
    static void regions(const item &x, mpicd::region_list &r) {
        if (armed == fault::regions) throw std::out_of_range("regions failed on purpose");
        r.add(x.data.data(), x.data.size());
    }
    static void resize(item &x, const mpicd::shape &s) {
        if (armed == fault::resize) throw std::length_error("resize failed on purpose");
        x.data.resize(s.region_length<int>(0));
    }
};

static std::vector<item> make(int n, int salt) {
    std::vector<item> v(static_cast<size_t>(n));
    for (int i = 0; i < n; i++) {
        v[static_cast<size_t>(i)].value = i;
        v[static_cast<size_t>(i)].data.assign(static_cast<size_t>(i % 5), i * 10 + salt);
    }
    return v;
}

// A clean exchange on the pair: the runtime is still healthy.
static void clean(MPI_Datatype t, int peer, bool sender, int tag) {
    armed = fault::none;
    std::vector<item> v = make(50, tag);
    if (sender) {
        OK(MPI_Send(v.data(), 50, t, peer, tag, MPI_COMM_WORLD));
    } else {
        std::vector<item> got = make(50, -1);
        for (auto &x : got) x.value = -1;
        OK(MPI_Recv(got.data(), 50, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < v.size(); i++) CHECK(got[i].value == v[i].value && got[i].data == v[i].data);
    }
}

// The sender's pack (or regions) fails: `want` on the sender, some error on the receiver.
static void sender_fault(MPI_Datatype t, int peer, bool sender, fault f, int n, int at,
                         int want, const char *what, int tag) {
    if (sender) {
        armed = f;
        poison = at;
        std::vector<item> v = make(n, 0);
        mpicd::last_callback_error().clear();
        int rc = MPI_Send(v.data(), n, t, peer, tag, MPI_COMM_WORLD);
        armed = fault::none;
        if (rc != want) {
            std::fprintf(stderr, "[rank %d] case %s: MPI_Send returned %d, expected %d\n",
                         test::rank(), what, rc, want);
            CHECK(rc == want);
        }
        CHECK(mpicd::last_callback_error().find(what) != std::string::npos);
    } else {
        std::vector<item> got = make(n, -1);
        int rc = MPI_Recv(got.data(), n, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS);
    }
    clean(t, peer, sender, tag + 1);
}

// The receiver's unpack or resize fails: an error there; the sender completes.
static void receiver_fault(MPI_Datatype t, int peer, bool sender, fault f, int n, int at,
                           const char *what, int tag) {
    std::vector<item> v = make(n, 0);
    if (sender) {
        int rc = MPI_Send(v.data(), n, t, peer, tag, MPI_COMM_WORLD);
        (void)rc;  // success, or the receiver's failure reported back: either way, no hang
    } else {
        armed = f;
        poison = at;
        mpicd::last_callback_error().clear();
        std::vector<item> got = make(n, -1);
        int rc = MPI_Recv(got.data(), n, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        armed = fault::none;
        CHECK(rc == MPI_ERR_OTHER);
        CHECK(mpicd::last_callback_error().find(what) != std::string::npos);
    }
    clean(t, peer, sender, tag + 1);
}

int main(int argc, char **argv) {
    test::init(&argc, &argv);
    int me = test::rank(), size = test::size();
    bool paired = (me ^ 1) < size;
    int peer = me ^ 1;
    bool sender = me % 2 == 0;
    MPI_Datatype t = mpicd::custom_type<item>();

    if (paired) {
        sender_fault(t, peer, sender, fault::pack_runtime, 10, 0, MPI_ERR_OTHER, "pack failed on purpose", 400);
        // 20000 objects pack 240 KB: the throw comes in a later fragment.
        sender_fault(t, peer, sender, fault::pack_runtime, 20000, 15000, MPI_ERR_OTHER, "pack failed on purpose", 410);
        sender_fault(t, peer, sender, fault::pack_code, 10, 3, MPI_ERR_BUFFER, "bad buffer on purpose", 420);
        sender_fault(t, peer, sender, fault::pack_bad_alloc, 10, 9, MPI_ERR_NO_MEM, "bad_alloc", 430);
        sender_fault(t, peer, sender, fault::pack_int, 10, 1, MPI_ERR_OTHER, "unknown C++ exception", 440);
        sender_fault(t, peer, sender, fault::regions, 10, 0, MPI_ERR_OTHER, "regions failed on purpose", 450);

        // Non-blocking: the error shows at MPI_Isend or at MPI_Wait.
        if (sender) {
            armed = fault::pack_runtime;
            poison = 2;
            std::vector<item> v = make(5, 0);
            MPI_Request r;
            int rc = MPI_Isend(v.data(), 5, t, peer, 460, MPI_COMM_WORLD, &r);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            armed = fault::none;
            CHECK(rc == MPI_ERR_OTHER);
        } else {
            std::vector<item> got = make(5, -1);
            MPI_Request r;
            OK(MPI_Irecv(got.data(), 5, t, peer, 460, MPI_COMM_WORLD, &r));
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS);
        }
        clean(t, peer, sender, 461);

        receiver_fault(t, peer, sender, fault::unpack, 10, 4, "unpack failed on purpose", 470);
        receiver_fault(t, peer, sender, fault::unpack, 20000, 19000, "unpack failed on purpose", 480);
        {  // resize runs for one object: receive count 1
            std::vector<item> v = make(3, 0);
            if (sender) {
                int rc = MPI_Send(&v[2], 1, t, peer, 490, MPI_COMM_WORLD);
                (void)rc;
            } else {
                armed = fault::resize;
                item got;
                int rc = MPI_Recv(&got, 1, t, peer, 490, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                armed = fault::none;
                CHECK(rc == MPI_ERR_OTHER);
                CHECK(mpicd::last_callback_error().find("resize failed on purpose") != std::string::npos);
            }
            clean(t, peer, sender, 491);
        }
    }

    OK(MPI_Type_free(&t));
    test::finish("exceptions");
    return 0;
}
