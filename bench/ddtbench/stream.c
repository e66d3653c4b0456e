/* stream.c: the packed-order description of a kernel's communicated elements (see ddtbench.h):
 * construction, resumable copy in both directions, runs (regions) and element enumeration. */
#include "ddtbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "ddtbench: %s\n", what);
    abort();
}

void stream_clear(stream_t *s) {
    memset(s, 0, sizeof *s);
}

static part_t *next_part(stream_t *s) {
    if (s->n == MAX_PARTS) die("too many stream parts");
    part_t *p = &s->p[s->n++];
    memset(p, 0, sizeof *p);
    return p;
}

void stream_seg(stream_t *s, void *base, size_t esize, size_t rl, size_t c1, size_t s1, size_t c2,
                size_t s2) {
    part_t *p = next_part(s);
    p->type = PART_SEG;
    p->base = base;
    p->esize = esize;
    p->rl = rl;
    p->c1 = c1;
    p->s1 = s1;
    p->c2 = c2;
    p->s2 = s2;
    p->bytes = esize * rl * c1 * c2;
    s->total += p->bytes;
}

void stream_rec(stream_t *s, const int *list, size_t start, size_t count) {
    part_t *p = next_part(s);
    p->type = PART_REC;
    p->list = list;
    p->start = start;
    p->count = count;
}

void stream_field(stream_t *s, void *base, size_t esize, size_t nelem) {
    part_t *p = &s->p[s->n - 1];
    if (p->type != PART_REC || p->nf == MAX_FIELDS) die("bad record field");
    p->f[p->nf++] = (field_t){(char *)base, esize, nelem};
    size_t add = esize * nelem;
    p->recbytes += add;
    p->bytes += add * p->count;
    s->total += add * p->count;
}

/* Copies n bytes; the sizes of the kernels' runs and fields get an inlined fixed-size copy. */
static inline void copy_bytes(char *dst, const char *src, size_t n) {
    switch (n) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 12: memcpy(dst, src, 12); break;
    case 16: memcpy(dst, src, 16); break;
    case 24: memcpy(dst, src, 24); break;
    case 40: memcpy(dst, src, 40); break;
    default: memcpy(dst, src, n);
    }
}

static size_t seg_copy(const part_t *p, size_t local, char *buf, size_t len, int pack) {
    size_t rb = p->esize * p->rl;
    size_t r = local / rb, within = local % rb;
    size_t i2 = r / p->c1, i1 = r % p->c1;
    size_t done = 0;
    while (done < len && i2 < p->c2) {
        char *row = p->base + i2 * p->s2 * p->esize;
        if (within == 0 && len - done >= rb) {
            /* Whole runs of this row, as many as fit: the tight loop. */
            size_t step = p->s1 * p->esize;
            char *mem = row + i1 * step;
            char *b = buf + done;
            size_t nrun = p->c1 - i1;
            if (nrun > (len - done) / rb) nrun = (len - done) / rb;
            if (pack)
                for (size_t k = 0; k < nrun; k++, mem += step, b += rb) copy_bytes(b, mem, rb);
            else
                for (size_t k = 0; k < nrun; k++, mem += step, b += rb) copy_bytes(mem, b, rb);
            done += nrun * rb;
            i1 += nrun;
            if (i1 == p->c1) {
                i1 = 0;
                i2++;
            }
            continue;
        }
        char *mem = row + i1 * p->s1 * p->esize + within;
        size_t n = rb - within;
        if (n > len - done) n = len - done;
        if (pack)
            memcpy(buf + done, mem, n);
        else
            memcpy(mem, buf + done, n);
        done += n;
        within += n;
        if (within == rb) {
            within = 0;
            if (++i1 == p->c1) {
                i1 = 0;
                i2++;
            }
        }
    }
    return done;
}

/* Whole records k .. k+n-1: field by field (the copy size is fixed in each inner loop, and each
 * field's array is walked with the same indices), into or out of the records at buf. */
static void rec_run(const part_t *p, size_t k, size_t n, char *buf, int pack) {
    size_t R = p->recbytes;
    for (int f = 0; f < p->nf; f++) {
        size_t nb = p->f[f].esize * p->f[f].nelem;
        char *base = p->f[f].base;
#define REC_RUN_LOOP(NB)                                                                           \
    for (size_t i = 0; i < n; i++) {                                                               \
        size_t idx = p->list ? (size_t)p->list[k + i] : p->start + k + i;                          \
        char *rec = buf + i * R;                                                                   \
        if (pack)                                                                                  \
            memcpy(rec, base + idx * (NB), (NB));                                                  \
        else                                                                                       \
            memcpy(base + idx * (NB), rec, (NB));                                                  \
    }
        switch (nb) {
        case 4: REC_RUN_LOOP(4) break;
        case 8: REC_RUN_LOOP(8) break;
        case 12: REC_RUN_LOOP(12) break;
        case 24: REC_RUN_LOOP(24) break;
        default: REC_RUN_LOOP(nb) break;
        }
#undef REC_RUN_LOOP
        buf += nb;
    }
}

static size_t rec_copy(const part_t *p, size_t local, char *buf, size_t len, int pack) {
    size_t R = p->recbytes;
    size_t k = local / R, within = local % R;
    size_t done = 0;
    char tmp[256];
    while (done < len && k < p->count) {
        if (within == 0 && len - done >= R) {
            size_t n = (len - done) / R;
            if (n > p->count - k) n = p->count - k;
            rec_run(p, k, n, buf + done, pack);
            done += n * R;
            k += n;
            continue;
        }
        /* A record split by a fragment boundary: through a temporary record. */
        size_t n = R - within;
        if (n > len - done) n = len - done;
        rec_run(p, k, 1, tmp, 1);
        if (pack) {
            memcpy(buf + done, tmp + within, n);
        } else {
            memcpy(tmp + within, buf + done, n);
            rec_run(p, k, 1, tmp, 0);
        }
        done += n;
        within += n;
        if (within == R) {
            within = 0;
            k++;
        }
    }
    return done;
}

size_t stream_copy(const stream_t *s, size_t off, char *buf, size_t len, int pack) {
    size_t done = 0, start = 0;
    for (int i = 0; i < s->n && done < len; i++) {
        const part_t *p = &s->p[i];
        size_t at = off + done;
        if (at < start + p->bytes) {
            size_t want = len - done;
            size_t got = p->type == PART_SEG ? seg_copy(p, at - start, buf + done, want, pack)
                                             : rec_copy(p, at - start, buf + done, want, pack);
            done += got;
        }
        start += p->bytes;
    }
    return done;
}

long stream_runs(const stream_t *s) {
    long n = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->p[i].type != PART_SEG) return -1;
        n += (long)(s->p[i].c1 * s->p[i].c2);
    }
    return n;
}

void stream_fill_runs(const stream_t *s, void **bases, MPI_Count *lens) {
    size_t r = 0;
    for (int i = 0; i < s->n; i++) {
        const part_t *p = &s->p[i];
        for (size_t i2 = 0; i2 < p->c2; i2++)
            for (size_t i1 = 0; i1 < p->c1; i1++, r++) {
                bases[r] = p->base + (i2 * p->s2 + i1 * p->s1) * p->esize;
                lens[r] = (MPI_Count)(p->rl * p->esize);
            }
    }
}

void stream_elements(const stream_t *s, void (*f)(void *ctx, char *addr, size_t esize),
                     void *ctx) {
    for (int i = 0; i < s->n; i++) {
        const part_t *p = &s->p[i];
        if (p->type == PART_SEG) {
            for (size_t i2 = 0; i2 < p->c2; i2++)
                for (size_t i1 = 0; i1 < p->c1; i1++)
                    for (size_t e = 0; e < p->rl; e++)
                        f(ctx, p->base + (i2 * p->s2 + i1 * p->s1 + e) * p->esize, p->esize);
        } else {
            for (size_t k = 0; k < p->count; k++) {
                size_t idx = p->list ? (size_t)p->list[k] : p->start + k;
                for (int fi = 0; fi < p->nf; fi++)
                    for (size_t e = 0; e < p->f[fi].nelem; e++)
                        f(ctx, p->f[fi].base + (idx * p->f[fi].nelem + e) * p->f[fi].esize,
                          p->f[fi].esize);
            }
        }
    }
}
