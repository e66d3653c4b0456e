// mpicd/custom.hpp: C++ types as mpicd custom datatypes (header-only, C++17).
//
// A type tells mpicd how to move it through mpicd::custom_traits<T>, or through member
// functions of T when custom_traits<T> is not specialised:
//
//   template <> struct mpicd::custom_traits<T> {              // or, as members of T:
//       static constexpr std::size_t pack_size = 20;          //   static constexpr pack_size
//       static void pack(const T &x, mpicd::packer &out);     //   void pack(packer &) const
//       static void unpack(T &x, mpicd::unpacker &in);        //   void unpack(unpacker &)
//       static void regions(const T &x, mpicd::region_list &r); // void regions(region_list &) const
//       static void resize(T &x, const mpicd::shape &s);      //   void resize(const shape &)
//       static std::size_t packed_size(const T &x);           //   std::size_t packed_size() const
//   };
//
// Every member is optional, but pack and unpack go together, and at least pack or regions is
// needed. pack writes the packed part of one object (scattered members, sizes, keys) with
// out.put(...); unpack reads it back in the same order with in.get(...). regions names the
// large contiguous parts (vector data) that travel without copies: r.add(v.data(), v.size()).
// On a receive, the receiver's regions must be at least as long as the sender's.
//   - pack_size: every object packs exactly this many bytes (the paper's Listing 1). Without
//     it the size of each object's packed part is measured (packed_size, else a counting run
//     of pack) and sent before it, 8 bytes per object.
//   - resize: called on a receive, before regions, with the sender's shape (its packed size
//     and the lengths of its regions), so that a receiver that does not know the shape can
//     size its object: a dynamic receive. It sizes one object, so it is called only for a
//     receive with count 1; a receive of several objects must size them beforehand (too
//     short a region is MPI_ERR_TRUNCATE, never an overrun).
//
// mpicd::custom_type<T>() builds the MPI datatype (MPI_Type_create_custom + the MPIX resize
// hook), committed; the caller frees it with MPI_Type_free. The C callbacks trampoline into
// the traits; a C++ exception never crosses into the runtime: it becomes the operation's MPI
// error (mpicd::error carries its own code, std::bad_alloc is MPI_ERR_NO_MEM, anything else
// MPI_ERR_OTHER) and its message is kept in mpicd::last_callback_error() of that thread.
//
// Packed data is in the sender's byte order (mpicd runs between like machines).
#ifndef MPICD_CUSTOM_HPP
#define MPICD_CUSTOM_HPP

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mpicd {

/// How a type is moved: specialise for T, or give T the member functions (see the top).
template <class T>
struct custom_traits {};

/// An error with its MPI error code: thrown from a callback to fail the operation with `code`,
/// and by custom_type() when MPI refuses the type.
class error : public std::runtime_error {
public:
    error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

/// The message of the last exception a callback of this thread turned into an MPI error.
inline std::string &last_callback_error() {
    static thread_local std::string message;
    return message;
}

/// The predefined MPI datatype of a region element, or MPI_BYTE for other trivially copyable
/// types (whose regions are then counted in bytes).
template <class U>
MPI_Datatype region_datatype() {
    using V = std::remove_cv_t<U>;
    if constexpr (std::is_same_v<V, char>) return MPI_CHAR;
    else if constexpr (std::is_same_v<V, signed char>) return MPI_SIGNED_CHAR;
    else if constexpr (std::is_same_v<V, unsigned char>) return MPI_UNSIGNED_CHAR;
    else if constexpr (std::is_same_v<V, std::byte>) return MPI_BYTE;
    else if constexpr (std::is_same_v<V, short>) return MPI_SHORT;
    else if constexpr (std::is_same_v<V, unsigned short>) return MPI_UNSIGNED_SHORT;
    else if constexpr (std::is_same_v<V, int>) return MPI_INT;
    else if constexpr (std::is_same_v<V, unsigned>) return MPI_UNSIGNED;
    else if constexpr (std::is_same_v<V, long>) return MPI_LONG;
    else if constexpr (std::is_same_v<V, unsigned long>) return MPI_UNSIGNED_LONG;
    else if constexpr (std::is_same_v<V, long long>) return MPI_LONG_LONG;
    else if constexpr (std::is_same_v<V, unsigned long long>) return MPI_UNSIGNED_LONG_LONG;
    else if constexpr (std::is_same_v<V, float>) return MPI_FLOAT;
    else if constexpr (std::is_same_v<V, double>) return MPI_DOUBLE;
    else {
        static_assert(std::is_trivially_copyable_v<V>,
                      "a region holds trivially copyable elements");
        return MPI_BYTE;
    }
}

/// Where pack writes the packed part of one object.
class packer {
public:
    /// Appends `n` bytes.
    void put(const void *p, std::size_t n) {
        if (dst_ != nullptr) {
            if (n > cap_ - pos_)
                throw error(MPI_ERR_INTERN, "pack wrote more bytes than it announced (" +
                                                std::to_string(pos_ + n) + " > " +
                                                std::to_string(cap_) + ")");
            if (n > 0) std::memcpy(dst_ + pos_, p, n);
        }
        pos_ += n;
    }
    /// Appends the bytes of a trivially copyable value.
    template <class U, class = std::enable_if_t<std::is_trivially_copyable_v<U>>>
    void put(const U &v) {
        put(&v, sizeof v);
    }
    /// Appends a string: its length (8 bytes), then its characters.
    void put(const std::string &s) {
        put(static_cast<std::uint64_t>(s.size()));
        put(s.data(), s.size());
    }
    /// Bytes written so far.
    std::size_t size() const noexcept { return pos_; }

    /// A packer that only counts.
    packer() = default;
    /// A packer into `cap` bytes at `dst`.
    packer(void *dst, std::size_t cap) : dst_(static_cast<unsigned char *>(dst)), cap_(cap) {}

private:
    unsigned char *dst_ = nullptr;
    std::size_t cap_ = 0;
    std::size_t pos_ = 0;
};

/// Where unpack reads the packed part of one object.
class unpacker {
public:
    unpacker(const void *src, std::size_t n) : src_(static_cast<const unsigned char *>(src)), n_(n) {}

    /// Reads `n` bytes.
    void get(void *p, std::size_t n) {
        if (n > 0) std::memcpy(p, take(n), n);
    }
    /// Reads a trivially copyable value.
    template <class U, class = std::enable_if_t<std::is_trivially_copyable_v<U>>>
    void get(U &v) {
        get(&v, sizeof v);
    }
    template <class U>
    U get() {
        U v;
        get(v);
        return v;
    }
    /// Reads a string written by packer::put(const std::string &).
    void get(std::string &s) {
        std::uint64_t n = get<std::uint64_t>();
        if (n > remaining()) throw_short(n);
        const char *p = static_cast<const char *>(take(static_cast<std::size_t>(n)));
        s.assign(p, p + n);
    }
    /// Points at the next `n` bytes and skips them (no copy).
    const void *take(std::size_t n) {
        if (n > remaining()) throw_short(n);
        const unsigned char *p = src_ + pos_;
        pos_ += n;
        return p;
    }
    /// Bytes not read yet.
    std::size_t remaining() const noexcept { return n_ - pos_; }

private:
    [[noreturn]] void throw_short(std::uint64_t n) const {
        throw error(MPI_ERR_TRUNCATE, "unpack read past the packed data (" + std::to_string(n) +
                                          " bytes wanted, " + std::to_string(remaining()) +
                                          " left)");
    }
    const unsigned char *src_;
    std::size_t n_;
    std::size_t pos_ = 0;
};

/// A memory region: `len` elements of the predefined type `type` at `base`.
struct region {
    void *base;
    MPI_Count len;
    MPI_Datatype type;
};

/// The regions of objects, in order.
class region_list {
public:
    /// Adds `n` elements at `p`. The receiver writes into them: they must belong to a
    /// non-const object there.
    template <class U>
    void add(const U *p, std::size_t n) {
        MPI_Datatype t = region_datatype<U>();
        MPI_Count len = static_cast<MPI_Count>(t == MPI_BYTE ? n * sizeof(U) : n);
        all_.push_back(region{const_cast<void *>(static_cast<const void *>(p)), len, t});
    }
    /// Adds `len` elements of the predefined type `type` at `p`.
    void add(const void *p, MPI_Count len, MPI_Datatype type) {
        all_.push_back(region{const_cast<void *>(p), len, type});
    }
    std::size_t size() const noexcept { return all_.size(); }
    const region &operator[](std::size_t i) const { return all_[i]; }
    void clear() noexcept { all_.clear(); }

private:
    std::vector<region> all_;
};

/// The shape of an incoming object: the size of its packed part (as pack wrote it) and the
/// length and type of each of its regions.
struct shape {
    MPI_Count packed_bytes = 0;
    std::vector<MPI_Count> lens;       // in elements of types[i]
    std::vector<MPI_Datatype> types;   // predefined types

    std::size_t region_count() const noexcept { return lens.size(); }
    /// Bytes of region `i`.
    std::size_t region_bytes(std::size_t i) const {
        int size = 0;
        MPI_Type_size(types.at(i), &size);
        return static_cast<std::size_t>(lens.at(i)) * static_cast<std::size_t>(size);
    }
    /// Length of region `i` in elements of U.
    template <class U>
    std::size_t region_length(std::size_t i) const {
        return region_bytes(i) / sizeof(U);
    }
};

namespace detail {

/// `has<Op, T>`: whether `Op<T>` is a type, i.e. whether the expression it is the type of
/// compiles for T (the detection idiom): `has<traits_pack_t, T>` says whether
/// custom_traits<T> has a pack function.
template <class T, template <class> class Op, class = void>
struct detected : std::false_type {};
template <class T, template <class> class Op>
struct detected<T, Op, std::void_t<Op<T>>> : std::true_type {};
template <template <class> class Op, class T>
inline constexpr bool has = detected<T, Op>::value;

// What custom_traits<T> and T's members may provide.
template <class T>
using traits_pack_t =
    decltype(custom_traits<T>::pack(std::declval<const T &>(), std::declval<packer &>()));
template <class T>
using member_pack_t = decltype(std::declval<const T &>().pack(std::declval<packer &>()));
template <class T>
using traits_unpack_t =
    decltype(custom_traits<T>::unpack(std::declval<T &>(), std::declval<unpacker &>()));
template <class T>
using member_unpack_t = decltype(std::declval<T &>().unpack(std::declval<unpacker &>()));
template <class T>
using traits_regions_t = decltype(custom_traits<T>::regions(std::declval<const T &>(),
                                                            std::declval<region_list &>()));
template <class T>
using member_regions_t =
    decltype(std::declval<const T &>().regions(std::declval<region_list &>()));
template <class T>
using traits_resize_t =
    decltype(custom_traits<T>::resize(std::declval<T &>(), std::declval<const shape &>()));
template <class T>
using member_resize_t = decltype(std::declval<T &>().resize(std::declval<const shape &>()));
template <class T>
using traits_packed_size_t = decltype(custom_traits<T>::packed_size(std::declval<const T &>()));
template <class T>
using member_packed_size_t = decltype(std::declval<const T &>().packed_size());

template <class T, class = void>
struct traits_pack_size : std::integral_constant<std::size_t, 0> {
    static constexpr bool fixed = false;
};
template <class T>
struct traits_pack_size<T, std::enable_if_t<std::is_integral_v<
                               std::remove_cv_t<decltype(custom_traits<T>::pack_size)>>>>
    : std::integral_constant<std::size_t, custom_traits<T>::pack_size> {
    static constexpr bool fixed = true;
};
template <class T, class = void>
struct member_pack_size : std::integral_constant<std::size_t, 0> {
    static constexpr bool fixed = false;
};
template <class T>
struct member_pack_size<T, std::enable_if_t<std::is_integral_v<std::remove_cv_t<decltype(T::pack_size)>>>>
    : std::integral_constant<std::size_t, T::pack_size> {
    static constexpr bool fixed = true;
};

/// What a type provides, from its traits first, then from its members.
template <class T>
struct ops {
    static constexpr bool traits_pack = has<traits_pack_t, T>;
    static constexpr bool has_pack = traits_pack || has<member_pack_t, T>;
    static constexpr bool has_unpack = has<traits_unpack_t, T> || has<member_unpack_t, T>;
    static constexpr bool has_regions = has<traits_regions_t, T> || has<member_regions_t, T>;
    static constexpr bool has_resize = has<traits_resize_t, T> || has<member_resize_t, T>;
    static constexpr bool fixed = traits_pack_size<T>::fixed || member_pack_size<T>::fixed;
    static constexpr std::size_t fixed_size =
        traits_pack_size<T>::fixed ? traits_pack_size<T>::value : member_pack_size<T>::value;
    /// Bytes before each object's packed part when sizes vary: its length.
    static constexpr std::size_t header = fixed ? 0 : sizeof(std::uint64_t);

    static_assert(has_pack == has_unpack,
                  "mpicd::custom_traits<T>: pack and unpack go together");
    static_assert(has_pack || has_regions,
                  "mpicd::custom_traits<T> (or T's members) must provide pack/unpack or regions");

    static void pack(const T &x, packer &p) {
        if constexpr (has<traits_pack_t, T>) custom_traits<T>::pack(x, p);
        else if constexpr (has<member_pack_t, T>) x.pack(p);
    }
    static void unpack(T &x, unpacker &u) {
        if constexpr (has<traits_unpack_t, T>) custom_traits<T>::unpack(x, u);
        else if constexpr (has<member_unpack_t, T>) x.unpack(u);
    }
    static void regions(const T &x, region_list &r) {
        if constexpr (has<traits_regions_t, T>) custom_traits<T>::regions(x, r);
        else if constexpr (has<member_regions_t, T>) x.regions(r);
    }
    static void resize(T &x, const shape &s) {
        if constexpr (has<traits_resize_t, T>) custom_traits<T>::resize(x, s);
        else if constexpr (has<member_resize_t, T>) x.resize(s);
    }
    /// Bytes pack writes for `x` (without the header).
    static std::size_t body_size(const T &x) {
        if constexpr (!has_pack) return 0;
        else if constexpr (fixed) return fixed_size;
        else if constexpr (has<traits_packed_size_t, T>) return custom_traits<T>::packed_size(x);
        else if constexpr (has<member_packed_size_t, T>) return x.packed_size();
        else {
            packer counter;
            pack(x, counter);
            return counter.size();
        }
    }
};

/// Per-operation state: the objects, where each one's packed part ends in the packed stream,
/// the object that straddles a fragment boundary, the regions between the region-count and
/// region callbacks, and on a receive where unpacking stands.
template <class T>
struct state {
    state(T *objs, MPI_Count count) : objs(objs), count(count) {}

    T *objs;
    MPI_Count count;
    std::vector<MPI_Count> ends;         // send, sizes vary: end of object i in the stream
    MPI_Count total = -1;                // send: packed bytes; receive: the sender's (resize)
    std::vector<unsigned char> scratch;  // one object's packed part
    MPI_Count scratch_of = -1;           // send: which object scratch holds
    region_list regions;
    // Receive.
    MPI_Count received = 0;     // stream bytes unpacked so far
    MPI_Count current = 0;      // object being unpacked
    unsigned char header[sizeof(std::uint64_t)] = {};
    std::size_t header_have = 0;
    std::size_t body_len = 0;
    std::size_t body_have = 0;
    bool in_body = false;

    MPI_Count start_of(MPI_Count i) const {
        if (ops<T>::fixed) return i * static_cast<MPI_Count>(ops<T>::fixed_size);
        return i == 0 ? 0 : ends[static_cast<std::size_t>(i - 1)];
    }
    MPI_Count end_of(MPI_Count i) const {
        if (ops<T>::fixed) return (i + 1) * static_cast<MPI_Count>(ops<T>::fixed_size);
        return ends[static_cast<std::size_t>(i)];
    }
    /// The object whose packed part holds stream offset `at`.
    MPI_Count object_at(MPI_Count at) const {
        if (ops<T>::fixed) return at / static_cast<MPI_Count>(ops<T>::fixed_size);
        return std::upper_bound(ends.begin(), ends.end(), at) - ends.begin();
    }
    /// Writes object i's packed part (header included) into `len` bytes at `dst`.
    void serialize(MPI_Count i, unsigned char *dst, std::size_t len) {
        packer p(dst, len);
        if (ops<T>::header > 0) p.put(static_cast<std::uint64_t>(len - ops<T>::header));
        ops<T>::pack(objs[i], p);
        if (p.size() != len)
            throw error(MPI_ERR_INTERN, "pack of object " + std::to_string(i) + " wrote " +
                                            std::to_string(p.size() - ops<T>::header) +
                                            " bytes, announced " +
                                            std::to_string(len - ops<T>::header));
    }
    /// Unpacks object `current` from `len` bytes at `src`.
    void deserialize(const unsigned char *src, std::size_t len) {
        if (current >= count)
            throw error(MPI_ERR_TRUNCATE, "more objects arrived than the receive count " +
                                              std::to_string(count));
        unpacker u(src, len);
        ops<T>::unpack(objs[current], u);
        if (u.remaining() != 0)
            throw error(MPI_ERR_OTHER, "unpack of object " + std::to_string(current) + " read " +
                                           std::to_string(len - u.remaining()) + " of " +
                                           std::to_string(len) + " bytes");
        current++;
    }
};

/// Runs `f`; an exception becomes an MPI error code. Never throws.
template <class F>
int guarded(F &&f) noexcept {
    auto remember = [](const char *what) noexcept {
        try {
            last_callback_error() = what;
        } catch (...) {
        }
    };
    try {
        f();
        return MPI_SUCCESS;
    } catch (const error &e) {
        remember(e.what());
        return e.code() == MPI_SUCCESS ? MPI_ERR_OTHER : e.code();
    } catch (const std::bad_alloc &e) {
        remember(e.what());
        return MPI_ERR_NO_MEM;
    } catch (const std::exception &e) {
        remember(e.what());
        return MPI_ERR_OTHER;
    } catch (...) {
        remember("unknown C++ exception");
        return MPI_ERR_OTHER;
    }
}

/// The C callbacks of custom_type<T>().
template <class T>
struct trampolines {
    using O = ops<T>;
    using S = state<T>;

    static int make_state(void *, const void *src, MPI_Count count, void **out) {
        return guarded([&] {
            *out = nullptr;
            *out = new S(static_cast<T *>(const_cast<void *>(src)), count);
        });
    }

    static int free_state(void *st) {
        return guarded([&] { delete static_cast<S *>(st); });
    }

    // Sender: the packed size; receiver: the largest accepted (known from resize).
    static int query(void *st, const void *, MPI_Count, MPI_Count *packed_size) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            if (s.total >= 0) {  // a receive: the sender's size (resize ran first)
                *packed_size = O::fixed ? s.count * static_cast<MPI_Count>(O::fixed_size)
                                        : s.total;
                return;
            }
            MPI_Count total = 0;
            if constexpr (O::has_pack) {
                if constexpr (O::fixed) {
                    total = s.count * static_cast<MPI_Count>(O::fixed_size);
                } else {
                    s.ends.resize(static_cast<std::size_t>(s.count));
                    for (MPI_Count i = 0; i < s.count; i++) {
                        total += static_cast<MPI_Count>(O::header + O::body_size(s.objs[i]));
                        s.ends[static_cast<std::size_t>(i)] = total;
                    }
                }
            }
            s.total = total;
            *packed_size = total;
        });
    }

    static int pack(void *st, const void *, MPI_Count, MPI_Count offset, void *dst,
                    MPI_Count dst_size, MPI_Count *used) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            unsigned char *out = static_cast<unsigned char *>(dst);
            MPI_Count done = 0;
            while (done < dst_size && offset + done < s.total) {
                MPI_Count at = offset + done;
                MPI_Count i = s.object_at(at);
                MPI_Count start = s.start_of(i), len = s.end_of(i) - start;
                MPI_Count room = dst_size - done;
                if (at == start && len <= room) {  // whole object: straight into the fragment
                    s.serialize(i, out + done, static_cast<std::size_t>(len));
                    done += len;
                } else {  // straddles the fragment: once into scratch, then piece by piece
                    if (s.scratch_of != i) {
                        s.scratch.resize(static_cast<std::size_t>(len));
                        s.scratch_of = -1;
                        s.serialize(i, s.scratch.data(), static_cast<std::size_t>(len));
                        s.scratch_of = i;
                    }
                    MPI_Count n = std::min(start + len - at, room);
                    std::memcpy(out + done, s.scratch.data() + (at - start),
                                static_cast<std::size_t>(n));
                    done += n;
                }
            }
            *used = done;
        });
    }

    static int unpack(void *st, void *, MPI_Count, MPI_Count offset, const void *src,
                      MPI_Count src_size) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            if (offset != s.received)
                throw error(MPI_ERR_INTERN, "packed data out of order");
            s.received += src_size;
            const unsigned char *p = static_cast<const unsigned char *>(src);
            std::size_t left = static_cast<std::size_t>(src_size);
            while (left > 0) {
                if (!s.in_body) {  // the object's length, or the fixed size
                    if (O::header > 0) {
                        std::size_t n = std::min(O::header - s.header_have, left);
                        std::memcpy(s.header + s.header_have, p, n);
                        s.header_have += n;
                        p += n;
                        left -= n;
                        if (s.header_have < O::header) break;
                        std::uint64_t len;
                        std::memcpy(&len, s.header, sizeof len);
                        if (s.total >= 0 && len > static_cast<std::uint64_t>(s.total))
                            throw error(MPI_ERR_TRUNCATE, "corrupt packed stream");
                        s.body_len = static_cast<std::size_t>(len);
                        s.header_have = 0;
                    } else {
                        s.body_len = O::fixed_size;
                    }
                    s.in_body = true;
                    s.body_have = 0;
                }
                if (s.body_have == 0 && left >= s.body_len) {  // whole (or empty) object here
                    s.deserialize(p, s.body_len);
                    p += s.body_len;
                    left -= s.body_len;
                } else {  // gather it across pieces
                    if (s.body_have == 0) s.scratch.resize(s.body_len);
                    std::size_t n = std::min(s.body_len - s.body_have, left);
                    std::memcpy(s.scratch.data() + s.body_have, p, n);
                    s.body_have += n;
                    p += n;
                    left -= n;
                    if (s.body_have < s.body_len) break;
                    s.deserialize(s.scratch.data(), s.body_len);
                }
                s.in_body = false;
            }
        });
    }

    static int region_count(void *st, void *, MPI_Count, MPI_Count *n) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            s.regions.clear();
            for (MPI_Count i = 0; i < s.count; i++) O::regions(s.objs[i], s.regions);
            *n = static_cast<MPI_Count>(s.regions.size());
        });
    }

    static int regions(void *st, void *, MPI_Count, MPI_Count n, void **bases, MPI_Count *lens,
                       MPI_Datatype *types) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            if (n != static_cast<MPI_Count>(s.regions.size()))
                throw error(MPI_ERR_INTERN, "region count changed");
            for (std::size_t i = 0; i < s.regions.size(); i++) {
                bases[i] = s.regions[i].base;
                lens[i] = s.regions[i].len;
                types[i] = s.regions[i].type;
            }
        });
    }

    // Receive: the sender's shape, before query and regions.
    static int resize(void *st, void *, MPI_Count count, MPI_Count packed_size,
                      MPI_Count region_count, const MPI_Count *lens, const MPI_Datatype *types) {
        return guarded([&] {
            S &s = *static_cast<S *>(st);
            s.total = packed_size;
            if constexpr (O::has_resize) {
                if (count != 1) return;  // an array: the receiver sized its objects
                shape sh;
                sh.packed_bytes =
                    std::max<MPI_Count>(0, packed_size - static_cast<MPI_Count>(O::header));
                sh.lens.assign(lens, lens + region_count);
                sh.types.assign(types, types + region_count);
                O::resize(s.objs[0], sh);
            } else {
                (void)count;
                (void)region_count;
                (void)lens;
                (void)types;
            }
        });
    }
};

}  // namespace detail

/// A committed MPI datatype that moves T through custom_traits<T> (or T's members). Free it
/// with MPI_Type_free. Throws mpicd::error when MPI refuses (with MPI_ERRORS_RETURN).
template <class T>
MPI_Datatype custom_type() {
    using Tr = detail::trampolines<T>;
    using O = detail::ops<T>;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_custom(
        &Tr::make_state, &Tr::free_state, &Tr::query, O::has_pack ? &Tr::pack : nullptr,
        O::has_unpack ? &Tr::unpack : nullptr, O::has_regions ? &Tr::region_count : nullptr,
        O::has_regions ? &Tr::regions : nullptr, nullptr, 1, &t);
    if (rc != MPI_SUCCESS) throw error(rc, "MPI_Type_create_custom failed");
    rc = MPIX_Type_custom_set_resize(t, &Tr::resize);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(&t);
        throw error(rc, "committing a custom datatype failed");
    }
    return t;
}

/// The shape of the custom-typed message `msg` (after MPI_Mprobe / MPI_Improbe), as the
/// resize of T would see it for one object: size a T from it, then MPI_Mrecv with count 1.
template <class T>
shape message_shape(MPI_Message msg) {
    MPI_Count packed = 0, n = 0;
    int rc = MPIX_Message_shape(msg, &packed, &n, 0, nullptr, nullptr);
    shape s;
    if (rc == MPI_SUCCESS && n > 0) {
        s.lens.resize(static_cast<std::size_t>(n));
        s.types.resize(static_cast<std::size_t>(n));
        rc = MPIX_Message_shape(msg, &packed, &n, n, s.lens.data(), s.types.data());
    }
    if (rc != MPI_SUCCESS) throw error(rc, "MPIX_Message_shape failed");
    s.packed_bytes = std::max<MPI_Count>(0, packed - static_cast<MPI_Count>(detail::ops<T>::header));
    return s;
}

}  // namespace mpicd

#endif
