/* The pickle opcodes (see Lib/pickletools.py) that Whoosh 3's posting blocks are made of,
 * written (ps_pk_*: for write_blocks and doc_postings) and read (ps_pkr_*: for
 * decode_list and decode_lists).
 */
#include "speedups.h"

/* -- written ---------------------------------------------------------------------------- */

int
ps_pk_int(PsBuf *b, long long v)
{
    unsigned char op[9];
    if (v >= 0 && v <= 0xff) {
        op[0] = 'K'; /* BININT1 */
        op[1] = (unsigned char)v;
        return ps_buf_put(b, op, 2);
    }
    if (v >= 0 && v <= 0xffff) {
        op[0] = 'M'; /* BININT2, little-endian */
        op[1] = (unsigned char)(v & 0xff);
        op[2] = (unsigned char)(v >> 8);
        return ps_buf_put(b, op, 3);
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t u = (uint32_t)(int32_t)v;
        op[0] = 'J'; /* BININT, little-endian signed */
        for (int i = 0; i < 4; i++) {
            op[1 + i] = (unsigned char)(u >> (8 * i));
        }
        return ps_buf_put(b, op, 5);
    }
    /* LONG1: a length byte and the two's complement bytes, little-endian */
    uint64_t u = (uint64_t)v;
    unsigned char bytes[8];
    int n = 8;
    for (int i = 0; i < 8; i++) {
        bytes[i] = (unsigned char)(u >> (8 * i));
    }
    /* Drop redundant sign bytes. */
    while (n > 1 && ((bytes[n - 1] == 0x00 && !(bytes[n - 2] & 0x80)) ||
                     (bytes[n - 1] == 0xff && (bytes[n - 2] & 0x80)))) {
        n--;
    }
    op[0] = 0x8a;
    op[1] = (unsigned char)n;
    if (ps_buf_put(b, op, 2) < 0) {
        return -1;
    }
    return ps_buf_put(b, bytes, n);
}

int
ps_pk_float(PsBuf *b, double v)
{
    unsigned char op[9];
    op[0] = 'G'; /* BINFLOAT, big-endian */
    if (PyFloat_Pack8(v, (char *)op + 1, 0) < 0) {
        return -1;
    }
    return ps_buf_put(b, op, 9);
}

/* SHORT_BINBYTES or BINBYTES (little-endian length) for n bytes; the bytes go next. */
int
ps_pk_bytes_head(PsBuf *b, Py_ssize_t n)
{
    unsigned char op[5];
    if (n <= 0xff) {
        op[0] = 'C';
        op[1] = (unsigned char)n;
        return ps_buf_put(b, op, 2);
    }
    op[0] = 'B';
    for (int i = 0; i < 4; i++) {
        op[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    }
    return ps_buf_put(b, op, 5);
}

int
ps_pk_bytes(PsBuf *b, const char *src, Py_ssize_t n)
{
    return ps_pk_bytes_head(b, n) < 0 ? -1 : ps_buf_put(b, src, n);
}

/* A tuple: MARK before its items (when it has more than three), this after them. */
int
ps_pk_tuple_end(PsBuf *b, Py_ssize_t n)
{
    static const unsigned char ops[4] = {')', 0x85, 0x86, 0x87}; /* EMPTY_TUPLE, TUPLE1-3 */
    return ps_buf_byte(b, n <= 3 ? ops[n] : 't');
}

int
ps_pk_tuple_start(PsBuf *b, Py_ssize_t n)
{
    return n > 3 ? ps_buf_byte(b, '(') : 0;
}

/* -- read ------------------------------------------------------------------------------- */

/* Past the PROTO and FRAME a pickle may start with. Always 0. */
int
ps_pkr_header(PsPkReader *r)
{
    if (r->at + 2 <= r->n && r->p[r->at] == 0x80) { /* PROTO */
        r->at += 2;
    }
    if (r->at + 9 <= r->n && r->p[r->at] == 0x95) { /* FRAME */
        r->at += 9;
    }
    return 0;
}

static void
pkr_memo(PsPkReader *r)
{
    if (r->at + 2 <= r->n && r->p[r->at] == 'q') { /* BINPUT */
        r->at += 2;
    } else if (r->at + 5 <= r->n && r->p[r->at] == 'r') { /* LONG_BINPUT */
        r->at += 5;
    } else if (r->at < r->n && r->p[r->at] == 0x94) { /* MEMOIZE */
        r->at += 1;
    }
}

/* One number (BININT1, BININT2, BININT, LONG1 of up to 8 bytes, BINFLOAT) into *out;
 * 1 when read, 0 when the next opcode is not a number, -1 when the data ends. */
static int
pkr_number(PsPkReader *r, double *out)
{
    if (r->at >= r->n) {
        return -1;
    }
    const unsigned char *p = r->p + r->at + 1;
    Py_ssize_t left = r->n - r->at - 1;
    switch (r->p[r->at]) {
    case 'K':
        if (left < 1) return -1;
        *out = p[0];
        r->at += 2;
        return 1;
    case 'M':
        if (left < 2) return -1;
        *out = (double)((uint32_t)p[0] | ((uint32_t)p[1] << 8));
        r->at += 3;
        return 1;
    case 'J': {
        if (left < 4) return -1;
        uint32_t u = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24);
        *out = (double)(int32_t)u;
        r->at += 5;
        return 1;
    }
    case 0x8a: { /* LONG1 */
        if (left < 1 || p[0] > 8 || left < 1 + p[0]) return -1;
        int len = p[0];
        uint64_t u = 0;
        for (int i = 0; i < len; i++) {
            u |= (uint64_t)p[1 + i] << (8 * i);
        }
        if (len > 0 && len < 8 && (p[len] & 0x80)) {
            u |= ~(uint64_t)0 << (8 * len); /* negative: extend the sign */
        }
        *out = (double)(int64_t)u;
        r->at += 2 + len;
        return 1;
    }
    case 'G': { /* BINFLOAT, big-endian */
        if (left < 8) return -1;
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) {
            u = (u << 8) | p[i];
        }
        double d;
        memcpy(&d, &u, 8);
        *out = d;
        r->at += 9;
        return 1;
    }
    default:
        return 0;
    }
}

/* A tuple of numbers (empty, TUPLE1-3, or MARK ... TUPLE), each put in `out` as a double;
 * its length in *count: 0. A number alone (not in a tuple): 1, *count 1. -1 for anything
 * else, -2 when out of memory. */
int
ps_pkr_numbers(PsPkReader *r, PsBuf *out, Py_ssize_t *count)
{
    *count = 0;
    if (r->at >= r->n) {
        return -1;
    }
    if (r->p[r->at] == ')') { /* EMPTY_TUPLE */
        r->at += 1;
        pkr_memo(r);
        return 0;
    }
    int marked = r->p[r->at] == '(';
    if (marked) {
        r->at += 1;
    }
    for (;;) {
        double v;
        int got = pkr_number(r, &v);
        if (got < 0) {
            return -1;
        }
        if (got == 0) {
            break;
        }
        if (ps_buf_put(out, &v, sizeof v) < 0) {
            return -2;
        }
        (*count)++;
    }
    if (r->at >= r->n) {
        return -1;
    }
    unsigned char op = r->p[r->at];
    if (!marked && *count == 1 && op != 0x85) {
        return 1; /* one number, not in a tuple */
    }
    r->at += 1;
    if (marked ? op != 't' : !(op == 0x85 + *count - 1 && *count >= 1 && *count <= 3)) {
        return -1;
    }
    pkr_memo(r);
    return 0;
}

/* A block's values as write_blocks writes them (protocol 5): a tuple of `count` bytes
 * (SHORT_BINBYTES or BINBYTES), each appended to `out` as a bytes object, or without
 * `out`, to `joined`, with where it ends there appended to `ends` (int64). 0 when read, -1
 * for anything else (None, joined values, memo references, protocol 2's calls to
 * _codecs.encode: pickle reads those), -2 when out of memory. */
int
ps_pkr_values(PsPkReader *r, PyObject *out, PsBuf *joined, PsBuf *ends, Py_ssize_t count)
{
    if (r->at >= r->n) {
        return -1;
    }
    int marked = r->p[r->at] == '(';
    if (marked) {
        r->at += 1;
    } else if (count > 3) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (r->at + 2 > r->n) {
            return -1;
        }
        const unsigned char *p = r->p + r->at;
        Py_ssize_t size, head;
        if (p[0] == 'C') {
            size = p[1];
            head = 2;
        } else if (p[0] == 'B' && r->at + 5 <= r->n) {
            size = (Py_ssize_t)((uint32_t)p[1] | ((uint32_t)p[2] << 8) | ((uint32_t)p[3] << 16) |
                                ((uint32_t)p[4] << 24));
            head = 5;
        } else {
            return -1;
        }
        if (r->at + head + size > r->n) {
            return -1;
        }
        if (out != NULL) {
            PyObject *value = PyBytes_FromStringAndSize((const char *)p + head, size);
            if (value == NULL) {
                return -2;
            }
            int failed = PyList_Append(out, value);
            Py_DECREF(value);
            if (failed) {
                return -2;
            }
        } else {
            if (ps_buf_put(joined, p + head, size) < 0) {
                return -2;
            }
            int64_t end = (int64_t)joined->len;
            if (ps_buf_put(ends, &end, 8) < 0) {
                return -2;
            }
        }
        r->at += head + size;
        pkr_memo(r);
    }
    if (r->at >= r->n) {
        return -1;
    }
    unsigned char op = r->p[r->at];
    if (marked ? op != 't' : op != (count == 0 ? ')' : 0x85 + count - 1)) {
        return -1;
    }
    r->at += 1;
    pkr_memo(r);
    return 0;
}
