/* ring.c: what UCX's shared-memory FIFO does with a long message, without UCX: a process on cpu 0
 * copies 16 KiB segments into a ring of 64 shared slots, one on cpu 1 copies them out into 64
 * receive buffers of MSG bytes (a window of 64 messages, like the datatype benchmark's). Prints
 * the MB/s of each of WINDOWS windows (the first includes start-up). With NT=1 the writer uses
 * non-temporal stores, as mpicd's sender does when its copies turn slow (ops::stream_copy).
 * Usage: ring [MSG [WINDOWS [NT]]] */
#define _GNU_SOURCE
#include <immintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define SLOTS 64
#define SEG 16384
#define SLOT_BYTES (SEG + 64)
#define WINDOW 64

struct control {
    volatile uint64_t head __attribute__((aligned(64)));
    volatile uint64_t tail __attribute__((aligned(64)));
};

/* dst is 64-byte aligned here (a slot's data), SEG a multiple of 64. */
static void copy_nt(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    _mm_sfence();
}

int main(int argc, char **argv)
{
    size_t msg = argc > 1 ? strtoul(argv[1], NULL, 10) : 4 << 20;
    int windows = argc > 2 ? atoi(argv[2]) : 8;
    int nt = argc > 3 ? atoi(argv[3]) : 0;
    msg = msg / SEG * SEG;
    if (msg == 0 || windows <= 0)
        return 2;
    char *shm = mmap(NULL, 4096 + SLOTS * SLOT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
        return 1;
    struct control *ctl = (struct control *)shm;
    char *ring = shm + 4096;
    size_t segs = msg / SEG;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        pin(1);
        char *dst[WINDOW];
        for (int i = 0; i < WINDOW; i++) {
            dst[i] = malloc(msg);
            if (!dst[i])
                _exit(1);
            memset(dst[i], 1, msg);
        }
        uint64_t t = 0;
        for (int w = 0; w < windows; w++)
            for (int m = 0; m < WINDOW; m++)
                for (size_t s = 0; s < segs; s++) {
                    while (ctl->head == t)
                        ;
                    memcpy(dst[m] + s * SEG, ring + (t % SLOTS) * SLOT_BYTES + 64, SEG);
                    t++;
                    if (t % (SLOTS / 2) == 0)
                        __atomic_store_n(&ctl->tail, t, __ATOMIC_RELEASE);
                }
        _exit(0);
    }
    pin(0);
    char *src = malloc(msg);
    if (!src)
        return 1;
    memset(src, 2, msg);
    uint64_t h = 0;
    for (int w = 0; w < windows; w++) {
        double t0 = now();
        for (int m = 0; m < WINDOW; m++)
            for (size_t s = 0; s < segs; s++) {
                while (h - ctl->tail >= SLOTS)
                    ;
                char *slot = ring + (h % SLOTS) * SLOT_BYTES + 64;
                if (nt)
                    copy_nt(slot, src + s * SEG, SEG);
                else
                    memcpy(slot, src + s * SEG, SEG);
                __atomic_store_n(&ctl->head, h + 1, __ATOMIC_RELEASE);
                h++;
            }
        printf("%.0f ", WINDOW * msg / (now() - t0) / 1e6);
        fflush(stdout);
    }
    printf("\n");
    waitpid(child, NULL, 0);
    return 0;
}
