/* dyn_ports.c: MPI's ports and names. The world splits into two halves; the low half opens a
 * port and publishes it, the high half looks it up and connects: both get an
 * inter-communicator, check its groups, exchange data both ways (root to root, and every
 * member to every remote member), merge it and reduce over the merged communicator, then
 * disconnect. Then two processes join over a TCP loopback socket (MPI_Comm_join). Also the
 * errors: a malformed port name and a closed port (MPI_ERR_PORT, after the connect timeout,
 * set to 2 s here), an unknown service (MPI_ERR_NAME on lookup, MPI_ERR_SERVICE on
 * unpublish). One process alone runs the local parts (ports, names, errors). */
#include "check.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void check_errors(void) {
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
    MPI_Comm inter = MPI_COMM_NULL;
    OK(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME);
    OK(MPI_Close_port(port));
    FAILS(MPI_Close_port(port), MPI_ERR_PORT);
    /* Nobody accepts on a closed port: MPI_ERR_PORT after the timeout. */
    FAILS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
    FAILS(MPI_Comm_connect("no port at all", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
          MPI_ERR_PORT);
    FAILS(MPI_Comm_accept("no port at all", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
          MPI_ERR_PORT);
    CHECK(inter == MPI_COMM_NULL);
    FAILS(MPI_Lookup_name("mpicd-test-never-published", MPI_INFO_NULL, found), MPI_ERR_NAME);
    FAILS(MPI_Unpublish_name("mpicd-test-never-published", MPI_INFO_NULL, port),
          MPI_ERR_SERVICE);
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
}

/* The halves meet through a published port and talk over the inter-communicator. */
static void halves(int rank, int size) {
    int low = rank < size / 2;
    MPI_Comm half, inter, merged;
    char port[MPI_MAX_PORT_NAME] = "", service[64];
    OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    int hrank, hsize;
    OK(MPI_Comm_rank(half, &hrank));
    OK(MPI_Comm_size(half, &hsize));
    snprintf(service, sizeof service, "mpicd-dyn-ports-%d", (int)getppid());
    if (low) {
        if (hrank == 0) {
            OK(MPI_Open_port(MPI_INFO_NULL, port));
            OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (hrank == 0) OK(MPI_Lookup_name(service, MPI_INFO_NULL, port));
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    }
    OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int flag = 0, rsize = -1, irank = -1;
    OK(MPI_Comm_test_inter(inter, &flag));
    OK(MPI_Comm_remote_size(inter, &rsize));
    OK(MPI_Comm_rank(inter, &irank));
    CHECK(flag == 1 && irank == hrank);
    CHECK(rsize == (low ? size - size / 2 : size / 2));
    /* Every member sends to every remote member, and receives from each. */
    int out[64], in[64];
    for (int r = 0; r < rsize; r++) out[r] = 1000 * (low ? 1 : 2) + 10 * hrank + r;
    MPI_Request reqs[128];
    for (int r = 0; r < rsize; r++) {
        OK(MPI_Irecv(&in[r], 1, MPI_INT, r, 5, inter, &reqs[r]));
        OK(MPI_Isend(&out[r], 1, MPI_INT, r, 5, inter, &reqs[rsize + r]));
    }
    OK(MPI_Waitall(2 * rsize, reqs, MPI_STATUSES_IGNORE));
    for (int r = 0; r < rsize; r++) CHECK(in[r] == 1000 * (low ? 2 : 1) + 10 * r + hrank);
    /* Any source: the status names the remote rank. */
    if (hrank == 0) {
        MPI_Status st;
        int v = low ? 11 : 22, got = -1;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 9, inter));
        OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, inter, &st));
        CHECK(got == (low ? 22 : 11) && st.MPI_SOURCE == 0 && st.MPI_TAG == 9);
    }
    /* A collective on the inter-communicator, and the merged intra-communicator. */
    int root_val = low ? 77 : -1;
    OK(MPI_Bcast(&root_val, 1, MPI_INT, low ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0,
                 inter));
    if (!low) CHECK(root_val == 77);
    OK(MPI_Intercomm_merge(inter, !low, &merged));
    int mrank, msize, sum = 0;
    OK(MPI_Comm_rank(merged, &mrank));
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == size);
    CHECK(low ? mrank == hrank : mrank == size / 2 + hrank);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL);
    if (low && hrank == 0) {
        OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        OK(MPI_Close_port(port));
    }
    OK(MPI_Comm_free(&half));
}

/* Ranks 0 and size-1 join over a TCP loopback connection. */
static void join(int rank, int size) {
    int peer = size - 1, fd = -1;
    if (rank != 0 && rank != peer) return;
    if (rank == 0) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(lfd >= 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 1) == 0);
        socklen_t len = sizeof a;
        CHECK(getsockname(lfd, (struct sockaddr *)&a, &len) == 0);
        int tcp_port = ntohs(a.sin_port);
        OK(MPI_Send(&tcp_port, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
        fd = accept(lfd, NULL, NULL);
        close(lfd);
    } else {
        int tcp_port;
        OK(MPI_Recv(&tcp_port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(tcp_port);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    CHECK(fd >= 0);
    MPI_Comm inter;
    OK(MPI_Comm_join(fd, &inter));
    int rsize = -1, v = rank, got = -1;
    OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == 1);
    OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE));
    CHECK(got == (rank == 0 ? peer : 0));
    OK(MPI_Comm_disconnect(&inter));
    close(fd);
}

int main(int argc, char **argv) {
    int rank, size;
    setenv("MPICD_CONNECT_TIMEOUT", "2", 1);
    test_init(&argc, &argv, &rank, &size);
    check_errors();
    if (size >= 2) {
        halves(rank, size);
        join(rank, size);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    test_finish(rank, "dyn_ports");
    return 0;
}
