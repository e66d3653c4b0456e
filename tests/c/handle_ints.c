/* handle_ints.c: the integer forms of handles (MPI_<Kind>_toint/_fromint of the MPI-5 ABI and
 * the older _c2f/_f2c): predefined handles keep their value, other handles round-trip and keep
 * their integer, and a communicator passed between ranks by integer is usable again (each rank
 * converts its own: the integers are local). */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);

    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)(size_t)MPI_COMM_WORLD);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_SELF)) == MPI_COMM_SELF);
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
    CHECK(MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL);

    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int i = MPI_Comm_c2f(dup);
    CHECK(i >= 4096 && MPI_Comm_c2f(dup) == i);
    MPI_Comm back = MPI_Comm_f2c(i);
    CHECK(back == dup);
    int sum = 0;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, back));
    CHECK(sum == size * (size - 1) / 2);

    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    int t = MPI_Type_toint(vec);
    CHECK(t != i && MPI_Type_fromint(t) == vec);
    OK(MPI_Type_free(&vec));

    MPI_Group g;
    OK(MPI_Comm_group(dup, &g));
    CHECK(MPI_Group_fromint(MPI_Group_toint(g)) == g);
    OK(MPI_Group_free(&g));

    MPI_Request req;
    int x = rank, y = -1;
    OK(MPI_Irecv(&y, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &req));
    MPI_Request r2 = MPI_Request_fromint(MPI_Request_toint(req));
    CHECK(r2 == req);
    OK(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_SELF));
    OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    CHECK(y == rank);

    CHECK(MPI_Comm_fromint(1 << 30) == MPI_COMM_NULL);
    CHECK(MPI_Info_fromint(-5) == MPI_INFO_NULL);
    OK(MPI_Comm_free(&dup));
    test_finish(rank, "handle_ints");
    return 0;
}
