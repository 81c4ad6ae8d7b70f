/* pubsearch._speedups: the hot loops of indexing (segments/, analysis.py), in C.
 *
 * Each function does what a piece of Python does, checked by tests/test_speedups.py;
 * without this module (no C compiler) that Python runs instead. See speedups.py.
 *
 * write_blocks() turns a chunk of terms' sorted postings into Whoosh 3 ("W3") posting
 * lists, as segments.w3write.FieldBlocks._chunk does in Python: for each term, its postings in
 * blocks of at most `blocklimit`, each block a length, a pickled info tuple and a pickled
 * (and, past a size, zlib-compressed) data tuple; and each term's info row for the terms
 * table. Whoosh's reader unpickles what is written here into the very tuples the Python
 * path writes; the pickles are only simpler (no memo, no frame), so a few bytes shorter.
 *
 * The arguments are numpy arrays (any object with a contiguous buffer of the right item
 * size), laid out as FieldBlocks keeps them; see w3write.FieldBlocks._chunk_in_c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* -- a growing byte buffer ------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (b->len + extra <= b->cap) {
        return 0;
    }
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) {
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int
buf_put(Buf *b, const void *src, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static int
buf_byte(Buf *b, unsigned char c)
{
    return buf_put(b, &c, 1);
}

static void
buf_free(Buf *b)
{
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static void
be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* -- pickle opcodes (see Lib/pickletools.py) -------------------------------------------- */

static int
pk_int(Buf *b, long long v)
{
    unsigned char op[9];
    if (v >= 0 && v <= 0xff) {
        op[0] = 'K'; /* BININT1 */
        op[1] = (unsigned char)v;
        return buf_put(b, op, 2);
    }
    if (v >= 0 && v <= 0xffff) {
        op[0] = 'M'; /* BININT2, little-endian */
        op[1] = (unsigned char)(v & 0xff);
        op[2] = (unsigned char)(v >> 8);
        return buf_put(b, op, 3);
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t u = (uint32_t)(int32_t)v;
        op[0] = 'J'; /* BININT, little-endian signed */
        for (int i = 0; i < 4; i++) {
            op[1 + i] = (unsigned char)(u >> (8 * i));
        }
        return buf_put(b, op, 5);
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
    if (buf_put(b, op, 2) < 0) {
        return -1;
    }
    return buf_put(b, bytes, n);
}

static int
pk_float(Buf *b, double v)
{
    unsigned char op[9];
    op[0] = 'G'; /* BINFLOAT, big-endian */
    if (PyFloat_Pack8(v, (char *)op + 1, 0) < 0) {
        return -1;
    }
    return buf_put(b, op, 9);
}

/* SHORT_BINBYTES or BINBYTES (little-endian length) for n bytes; the bytes go next. */
static int
pk_bytes_head(Buf *b, Py_ssize_t n)
{
    unsigned char op[5];
    if (n <= 0xff) {
        op[0] = 'C';
        op[1] = (unsigned char)n;
        return buf_put(b, op, 2);
    }
    op[0] = 'B';
    for (int i = 0; i < 4; i++) {
        op[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    }
    return buf_put(b, op, 5);
}

static int
pk_bytes(Buf *b, const char *src, Py_ssize_t n)
{
    return pk_bytes_head(b, n) < 0 ? -1 : buf_put(b, src, n);
}

/* A tuple: MARK before its items (when it has more than three), this after them. */
static int
pk_tuple_end(Buf *b, Py_ssize_t n)
{
    static const unsigned char ops[4] = {')', 0x85, 0x86, 0x87}; /* EMPTY_TUPLE, TUPLE1-3 */
    return buf_byte(b, n <= 3 ? ops[n] : 't');
}

static int
pk_tuple_start(Buf *b, Py_ssize_t n)
{
    return n > 3 ? buf_byte(b, '(') : 0;
}

static const char PROTO[2] = {(char)0x80, 5};

/* -- the arguments ----------------------------------------------------------------------- */

typedef struct {
    Py_buffer view;
    int held;
} Arg;

static int
arg_get(PyObject *obj, Arg *arg, Py_ssize_t itemsize, const char *name, int optional)
{
    arg->held = 0;
    if (obj == Py_None) {
        if (optional) {
            return 0;
        }
        PyErr_Format(PyExc_TypeError, "write_blocks: %s is required", name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, &arg->view, PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    arg->held = 1;
    if (arg->view.len % itemsize) {
        PyErr_Format(PyExc_ValueError, "write_blocks: %s is not of %zd-byte items", name,
                     itemsize);
        return -1;
    }
    return 0;
}

static void
arg_release(Arg *arg)
{
    if (arg->held) {
        PyBuffer_Release(&arg->view);
        arg->held = 0;
    }
}

enum { VALUES_NONE = 0, VALUES_FIXED = 1, VALUES_TUPLE = 2, VALUES_JOINED = 3 };

typedef struct {
    const int64_t *docs;
    const double *weights;
    const uint8_t *lengths; /* or NULL */
    const char *values;
    Py_ssize_t values_len;
    const int64_t *starts;
    const int64_t *ends;
    const char *fixed_values;
    Py_ssize_t fixed;
    int mode;
    int has_empty;
    int int_weights;
    long compression;
    Py_ssize_t min_compressed;
    PyObject *compress;
} Chunk;

/* Posting i's value: its bytes (a slice of `values`). */
static int
value_of(const Chunk *c, Py_ssize_t i, const char **src, Py_ssize_t *n)
{
    int64_t s = c->starts[i], e = c->ends[i];
    if (s < 0 || e < s || e > c->values_len) {
        PyErr_SetString(PyExc_ValueError, "write_blocks: a value lies outside the values");
        return -1;
    }
    *src = c->values + s;
    *n = (Py_ssize_t)(e - s);
    return 0;
}

/* The values of postings [s, e) as a block keeps them (FieldBlocks._chunk's mini_values). */
static int
pk_values(Buf *b, const Chunk *c, Py_ssize_t s, Py_ssize_t e)
{
    const char *src;
    Py_ssize_t n;
    switch (c->mode) {
    case VALUES_NONE:
        return buf_byte(b, 'N');
    case VALUES_FIXED:
        return pk_bytes(b, c->fixed_values + s * c->fixed, (e - s) * c->fixed);
    case VALUES_TUPLE: {
        /* Each value, less the empty ones when there are empty values. */
        Py_ssize_t count = 0;
        for (Py_ssize_t i = s; i < e; i++) {
            if (value_of(c, i, &src, &n) < 0) {
                return -1;
            }
            count += n > 0 || !c->has_empty;
        }
        if (pk_tuple_start(b, count) < 0) {
            return -1;
        }
        for (Py_ssize_t i = s; i < e; i++) {
            if (value_of(c, i, &src, &n) < 0) {
                return -1;
            }
            if (n > 0 || !c->has_empty) {
                if (pk_bytes(b, src, n) < 0) {
                    return -1;
                }
            }
        }
        return pk_tuple_end(b, count);
    }
    case VALUES_JOINED: {
        /* The values end to end, as one bytes. */
        Py_ssize_t total = 0;
        for (Py_ssize_t i = s; i < e; i++) {
            if (value_of(c, i, &src, &n) < 0) {
                return -1;
            }
            total += n;
        }
        if (pk_bytes_head(b, total) < 0) {
            return -1;
        }
        for (Py_ssize_t i = s; i < e; i++) {
            value_of(c, i, &src, &n);
            if (buf_put(b, src, n) < 0) {
                return -1;
            }
        }
        return 0;
    }
    }
    PyErr_SetString(PyExc_ValueError, "write_blocks: unknown value mode");
    return -1;
}

/* A block's highest weight as Whoosh keeps it: 0 (an int) unless positive; an int when
 * every weight given was an int. */
static int
pk_block_max(Buf *b, double w, int int_weights)
{
    if (!(w > 0)) {
        return pk_int(b, 0);
    }
    if (int_weights) {
        return pk_int(b, (long long)w);
    }
    return pk_float(b, w);
}

/* Append a block (its signed size, info pickle and data pickle) to `out`. */
static int
put_block(const Chunk *c, Buf *out, Buf *data, Py_ssize_t count, int64_t lastdoc,
          double block_max, int minlen, int maxlen, int last, Py_ssize_t *written)
{
    PyObject *compressed = NULL;
    const char *payload = data->data;
    Py_ssize_t payload_len = data->len;
    long comp = 0;
    if (c->compression && data->len >= c->min_compressed) {
        compressed = PyObject_CallFunction(c->compress, "y#l", data->data, data->len,
                                           c->compression);
        if (compressed == NULL) {
            return -1;
        }
        if (!PyBytes_Check(compressed)) {
            Py_DECREF(compressed);
            PyErr_SetString(PyExc_TypeError, "write_blocks: compress did not return bytes");
            return -1;
        }
        payload = PyBytes_AS_STRING(compressed);
        payload_len = PyBytes_GET_SIZE(compressed);
        comp = c->compression;
    }
    Buf info = {0};
    int rc = -1;
    /* (count, lastdoc, block_max, comp, minlen, maxlen), protocol 2 */
    if (buf_put(&info, PROTO, 2) < 0 || buf_byte(&info, '(') < 0 || pk_int(&info, count) < 0 ||
        pk_int(&info, lastdoc) < 0 || pk_block_max(&info, block_max, c->int_weights) < 0 ||
        pk_int(&info, comp) < 0 || pk_int(&info, minlen) < 0 || pk_int(&info, maxlen) < 0 ||
        buf_byte(&info, 't') < 0 || buf_byte(&info, '.') < 0) {
        goto done;
    }
    Py_ssize_t size = info.len + payload_len;
    if (size > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "write_blocks: a block is too large");
        goto done;
    }
    unsigned char head[4];
    be32(head, (uint32_t)(int32_t)(last ? -size : size));
    if (buf_put(out, head, 4) < 0 || buf_put(out, info.data, info.len) < 0 ||
        buf_put(out, payload, payload_len) < 0) {
        goto done;
    }
    *written = 4 + size;
    rc = 0;
done:
    buf_free(&info);
    Py_XDECREF(compressed);
    return rc;
}

/* One term's row in the terms table: W3TermInfo's fixed part, then its extent. */
static PyObject *
terminfo(double weight, int64_t count, int minlen, int maxlen, double maxweight,
         int64_t mindoc, int64_t maxdoc, int64_t offset, int64_t length)
{
    unsigned char row[35];
    row[0] = 0;
    if (PyFloat_Pack4(weight, (char *)row + 1, 0) < 0) {
        return NULL;
    }
    be32(row + 5, (uint32_t)count);
    row[9] = (unsigned char)minlen;
    row[10] = (unsigned char)maxlen;
    if (PyFloat_Pack4(maxweight, (char *)row + 11, 0) < 0) {
        return NULL;
    }
    be32(row + 15, (uint32_t)mindoc);
    be32(row + 19, (uint32_t)maxdoc);
    uint64_t off = (uint64_t)offset;
    for (int i = 0; i < 8; i++) {
        row[23 + i] = (unsigned char)(off >> (8 * (7 - i)));
    }
    be32(row + 31, (uint32_t)(int32_t)length);
    return PyBytes_FromStringAndSize((const char *)row, 35);
}

static double
as_float32(double w)
{
    return (double)(float)w;
}

static PyObject *
write_blocks(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"bounds",      "docs",        "weights",  "lengths",
                            "values",      "starts",      "ends",     "fixed_values",
                            "fixed",       "mode",        "has_empty", "int_weights",
                            "blocklimit",  "compression", "min_compressed",
                            "magic",       "pos",         "compress", NULL};
    PyObject *bounds_o, *docs_o, *weights_o, *lengths_o, *values_o, *starts_o, *ends_o;
    PyObject *fixed_o, *compress;
    Py_ssize_t fixed, blocklimit, min_compressed;
    int mode, has_empty, int_weights;
    long compression;
    const char *magic;
    Py_ssize_t magic_len;
    long long pos;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "OOOOOOOOnippnlny#LO:write_blocks", names, &bounds_o, &docs_o,
            &weights_o, &lengths_o, &values_o, &starts_o, &ends_o, &fixed_o, &fixed, &mode,
            &has_empty, &int_weights, &blocklimit, &compression, &min_compressed, &magic,
            &magic_len, &pos, &compress)) {
        return NULL;
    }
    if (blocklimit < 1 || mode < VALUES_NONE || mode > VALUES_JOINED ||
        (mode == VALUES_FIXED && fixed < 1)) {
        PyErr_SetString(PyExc_ValueError, "write_blocks: bad blocklimit, mode or fixed size");
        return NULL;
    }
    Arg bounds, docs, weights, lengths, values, starts, ends, fixed_values;
    Arg *all[] = {&bounds, &docs, &weights, &lengths, &values, &starts, &ends, &fixed_values};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        all[i]->held = 0;
    }
    Buf out = {0}, data = {0};
    PyObject *infos = NULL, *result = NULL;
    int need_values = mode == VALUES_TUPLE || mode == VALUES_JOINED;
    if (arg_get(bounds_o, &bounds, 8, "bounds", 0) < 0 || arg_get(docs_o, &docs, 8, "docs", 0) < 0 ||
        arg_get(weights_o, &weights, 8, "weights", 0) < 0 ||
        arg_get(lengths_o, &lengths, 1, "lengths", 1) < 0 ||
        arg_get(values_o, &values, 1, "values", !need_values) < 0 ||
        arg_get(starts_o, &starts, 8, "starts", !need_values) < 0 ||
        arg_get(ends_o, &ends, 8, "ends", !need_values) < 0 ||
        arg_get(fixed_o, &fixed_values, 1, "fixed_values", mode != VALUES_FIXED) < 0) {
        goto done;
    }
    Py_ssize_t n_terms = bounds.view.len / 8;
    Py_ssize_t n = docs.view.len / 8;
    const int64_t *ends_of = bounds.view.buf;
    if (weights.view.len / 8 != n || (lengths.held && lengths.view.len != n) ||
        (need_values && (starts.view.len / 8 != n || ends.view.len / 8 != n)) ||
        (mode == VALUES_FIXED && fixed_values.view.len != n * fixed) ||
        (n_terms && ends_of[n_terms - 1] != n)) {
        PyErr_SetString(PyExc_ValueError, "write_blocks: the arrays differ in length");
        goto done;
    }
    Chunk c = {
        .docs = docs.view.buf,
        .weights = weights.view.buf,
        .lengths = lengths.held ? lengths.view.buf : NULL,
        .values = values.held ? values.view.buf : NULL,
        .values_len = values.held ? values.view.len : 0,
        .starts = starts.held ? starts.view.buf : NULL,
        .ends = ends.held ? ends.view.buf : NULL,
        .fixed_values = fixed_values.held ? fixed_values.view.buf : NULL,
        .fixed = fixed,
        .mode = mode,
        .has_empty = has_empty,
        .int_weights = int_weights,
        .compression = compression,
        .min_compressed = min_compressed,
        .compress = compress,
    };
    infos = PyList_New(n_terms);
    if (infos == NULL) {
        goto done;
    }
    Py_ssize_t a = 0;
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        Py_ssize_t b = (Py_ssize_t)ends_of[t];
        if (b <= a || b > n) {
            PyErr_SetString(PyExc_ValueError, "write_blocks: bounds do not increase");
            goto done;
        }
        int64_t termstart = pos;
        if (buf_put(&out, magic, magic_len) < 0) {
            goto done;
        }
        pos += magic_len;
        double total_weight = 0, max_weight = 0;
        int min_len = 0, max_len = 0;
        for (Py_ssize_t s = a; s < b; s += blocklimit) {
            Py_ssize_t e = s + blocklimit < b ? s + blocklimit : b;
            Py_ssize_t count = e - s;
            /* data: (ids, weights, values) */
            data.len = 0;
            if (buf_put(&data, PROTO, 2) < 0 || pk_tuple_start(&data, count) < 0 ||
                pk_int(&data, c.docs[s]) < 0) {
                goto done;
            }
            for (Py_ssize_t i = s + 1; i < e; i++) {
                if (pk_int(&data, c.docs[i] - c.docs[i - 1]) < 0) {
                    goto done;
                }
            }
            if (pk_tuple_end(&data, count) < 0) {
                goto done;
            }
            double first = as_float32(c.weights[s]);
            int all_one = 1, all_same = 1;
            double block_sum = 0, block_max = c.weights[s];
            for (Py_ssize_t i = s; i < e; i++) {
                double w32 = as_float32(c.weights[i]);
                all_one &= w32 == 1.0;
                all_same &= w32 == first;
                block_sum += w32;
                if (c.weights[i] > block_max) {
                    block_max = c.weights[i];
                }
            }
            if (all_one) {
                if (buf_byte(&data, 'N') < 0) {
                    goto done;
                }
            }
            else if (all_same) {
                if (pk_float(&data, first) < 0) {
                    goto done;
                }
            }
            else {
                if (pk_tuple_start(&data, count) < 0) {
                    goto done;
                }
                for (Py_ssize_t i = s; i < e; i++) {
                    if (pk_float(&data, as_float32(c.weights[i])) < 0) {
                        goto done;
                    }
                }
                if (pk_tuple_end(&data, count) < 0) {
                    goto done;
                }
            }
            if (pk_values(&data, &c, s, e) < 0 || buf_byte(&data, 0x87) < 0 ||
                buf_byte(&data, '.') < 0) {
                goto done;
            }
            int minlen = 0, maxlen = 0;
            if (c.lengths != NULL) {
                int min_nonzero = 0;
                minlen = maxlen = c.lengths[s];
                for (Py_ssize_t i = s; i < e; i++) {
                    int lb = c.lengths[i];
                    if (lb < minlen) {
                        minlen = lb;
                    }
                    if (lb > maxlen) {
                        maxlen = lb;
                    }
                    if (lb && (!min_nonzero || lb < min_nonzero)) {
                        min_nonzero = lb;
                    }
                }
                if (!minlen && maxlen) {
                    minlen = min_nonzero;
                }
            }
            Py_ssize_t written;
            if (put_block(&c, &out, &data, count, c.docs[e - 1], block_max, minlen, maxlen,
                          e == b, &written) < 0) {
                goto done;
            }
            pos += written;
            total_weight += block_sum;
            double kept_max = !(block_max > 0) ? 0
                              : c.int_weights ? (double)(long long)block_max
                                              : block_max;
            if (kept_max > max_weight) {
                max_weight = kept_max;
            }
            if (maxlen) {
                if (!min_len || minlen < min_len) {
                    min_len = minlen;
                }
                if (maxlen > max_len) {
                    max_len = maxlen;
                }
            }
        }
        PyObject *row = terminfo(total_weight, b - a, min_len, max_len, max_weight, c.docs[a],
                                 c.docs[b - 1], termstart, pos - termstart);
        if (row == NULL) {
            goto done;
        }
        PyList_SET_ITEM(infos, t, row);
        a = b;
    }
    PyObject *posts = PyBytes_FromStringAndSize(out.data ? out.data : "", out.len);
    if (posts != NULL) {
        result = Py_BuildValue("(NO)", posts, infos);
    }
done:
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        arg_release(all[i]);
    }
    buf_free(&out);
    buf_free(&data);
    Py_XDECREF(infos);
    return result;
}

/* -- a document's postings in one field ---------------------------------------------------- */

/* A word of a document: its term number above its index (its place in the document: its
   position less the first), so that words in order are by term, then by place. */
typedef uint64_t Word;
#define WORD(termnum, index) (((uint64_t)(termnum) << 32) | (uint32_t)(index))
#define WORD_TERM(word) ((uint32_t)((word) >> 32))
#define WORD_INDEX(word) ((uint32_t)(word))

/* Sort words in place: quicksort (Hoare's partition round the median of the first, middle
   and last) down to 16 words, then insertion; the smaller part first, so the stack stays
   shallow. qsort's call per comparison cost a fifth of doc_postings. */
static void
sort_words(Word *a, Py_ssize_t n)
{
    while (n > 16) {
        Py_ssize_t mid = (n - 1) / 2;
        Word t;
        if (a[mid] < a[0]) {
            t = a[mid], a[mid] = a[0], a[0] = t;
        }
        if (a[n - 1] < a[mid]) {
            t = a[n - 1], a[n - 1] = a[mid], a[mid] = t;
            if (a[mid] < a[0]) {
                t = a[mid], a[mid] = a[0], a[0] = t;
            }
        }
        Word pivot = a[mid];
        Py_ssize_t i = -1, j = n;
        for (;;) {
            do {
                i++;
            } while (a[i] < pivot);
            do {
                j--;
            } while (a[j] > pivot);
            if (i >= j) {
                break;
            }
            t = a[i], a[i] = a[j], a[j] = t;
        }
        Py_ssize_t left = j + 1; /* a[0:left] <= pivot <= a[left:n], neither part empty */
        if (left < n - left) {
            sort_words(a, left);
            a += left;
            n -= left;
        }
        else {
            sort_words(a + left, n - left);
            n = left;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        Word x = a[i];
        Py_ssize_t k = i;
        for (; k > 0 && a[k - 1] > x; k--) {
            a[k] = a[k - 1];
        }
        a[k] = x;
    }
}

/* formats.Positions.encode(positions): a 4-byte count, then the position deltas as
 * pickle.dumps(deltas, 2) writes a list (segments/w3format.py reads the same layout back). */
static int
put_positions(Buf *b, const Word *words, Py_ssize_t count, long long first)
{
    unsigned char head[4];
    be32(head, (uint32_t)count);
    static const char list_head[5] = {(char)0x80, 2, ']', 'q', 0}; /* PROTO 2, EMPTY_LIST, BINPUT 0 */
    if (buf_put(b, head, 4) < 0 || buf_put(b, list_head, 5) < 0) {
        return -1;
    }
    if (count > 1 && buf_byte(b, '(') < 0) { /* MARK */
        return -1;
    }
    long long base = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long long position = first + WORD_INDEX(words[i]);
        if (pk_int(b, position - base) < 0) {
            return -1;
        }
        base = position;
    }
    return buf_byte(b, count > 1 ? 'e' : 'a') < 0 ? -1 : buf_byte(b, '.'); /* APPENDS/APPEND */
}

/* The term number of `stem` in the field: from `numbers` (the field's, `*committed` set),
   else from `fresh`, else the next free one (base + terms new so far), which `fresh` and
   `new_terms` take. -1 with an exception set on failure. */
static int
term_number(PyObject *numbers, PyObject *fresh, PyObject *new_terms, Py_ssize_t base,
            PyObject *stem, uint32_t *termnum, int *committed)
{
    *committed = 1;
    PyObject *number = PyDict_GetItemWithError(numbers, stem);
    if (number == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        *committed = 0;
        number = PyDict_GetItemWithError(fresh, stem);
        if (number == NULL) {
            if (PyErr_Occurred()) {
                return -1;
            }
            PyObject *next = PyLong_FromSsize_t(base + PyList_GET_SIZE(new_terms));
            if (next == NULL) {
                return -1;
            }
            int failed = PyDict_SetItem(fresh, stem, next) < 0 || PyList_Append(new_terms, stem) < 0;
            Py_DECREF(next);
            if (failed) {
                return -1;
            }
            number = PyDict_GetItemWithError(fresh, stem);
            if (number == NULL) {
                return -1;
            }
        }
    }
    unsigned long value = PyLong_AsUnsignedLong(number);
    if (value == (unsigned long)-1 && PyErr_Occurred()) {
        return -1;
    }
    if (value >= UINT32_MAX) { /* fieldmaps keep number + 1 in 32 bits */
        PyErr_SetString(PyExc_OverflowError, "doc_postings: too many terms");
        return -1;
    }
    *termnum = (uint32_t)value;
    return 0;
}

/* The result of doc_postings from a document's `n` words (sorted here): a posting per
   term, its number, weight, value and the value's size. */
static PyObject *
encode_postings(Word *words, Py_ssize_t n, Py_ssize_t base, PyObject *new_terms,
                long long first, int positions, double boost, double fieldboost)
{
    Buf termnums = {0}, weights = {0}, sizes = {0}, values = {0};
    PyObject *result = NULL;
    sort_words(words, n);
    Py_ssize_t postings = 0, last_start = 0;
    for (Py_ssize_t g = 0; g < n;) {
        Py_ssize_t h = g + 1;
        uint32_t termnum = WORD_TERM(words[g]);
        while (h < n && WORD_TERM(words[h]) == termnum) {
            h++;
        }
        Py_ssize_t freq = h - g;
        double weight = (double)freq;
        if (boost != 1.0 || fieldboost != 1.0) {
            weight = weight * boost * fieldboost;
        }
        last_start = values.len;
        if (positions) {
            if (put_positions(&values, words + g, freq, first) < 0) {
                goto done;
            }
        }
        else {
            unsigned char packed[4];
            be32(packed, (uint32_t)freq);
            if (buf_put(&values, packed, 4) < 0) {
                goto done;
            }
        }
        uint32_t size = (uint32_t)(values.len - last_start);
        if (buf_put(&termnums, &termnum, 4) < 0 || buf_put(&weights, &weight, 8) < 0 ||
            buf_put(&sizes, &size, 4) < 0) {
            goto done;
        }
        postings++;
        g = h;
    }
    result = Py_BuildValue(
        "(nOy#y#y#y#nny#)", base, new_terms, termnums.data ? termnums.data : "", termnums.len,
        weights.data ? weights.data : "", weights.len, sizes.data ? sizes.data : "", sizes.len,
        values.data ? values.data : "", values.len, postings, n,
        values.data ? values.data + last_start : "", values.len - last_start);
done:
    buf_free(&termnums);
    buf_free(&weights);
    buf_free(&sizes);
    buf_free(&values);
    return result;
}

static PyObject *
doc_postings(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"numbers", "stem_lists", "first", "positions", "boost", "fieldboost",
                            NULL};
    PyObject *numbers, *stem_lists;
    long long first;
    int positions;
    double boost, fieldboost;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OLpdd:doc_postings", names, &PyDict_Type,
                                     &numbers, &stem_lists, &first, &positions, &boost,
                                     &fieldboost)) {
        return NULL;
    }
    PyObject *lists = PySequence_Fast(stem_lists, "doc_postings: stem_lists must be a sequence");
    if (lists == NULL) {
        return NULL;
    }
    Py_ssize_t n_lists = PySequence_Fast_GET_SIZE(lists);
    if (positions && n_lists != 1) {
        Py_DECREF(lists);
        PyErr_SetString(PyExc_ValueError, "doc_postings: positions are kept for one list only");
        return NULL;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t l = 0; l < n_lists; l++) {
        PyObject *stems = PySequence_Fast_GET_ITEM(lists, l);
        if (!PyList_Check(stems)) {
            Py_DECREF(lists);
            PyErr_SetString(PyExc_TypeError, "doc_postings: each stem list must be a list");
            return NULL;
        }
        n += PyList_GET_SIZE(stems);
    }
    if ((uint64_t)n > UINT32_MAX) {
        Py_DECREF(lists);
        PyErr_SetString(PyExc_OverflowError, "doc_postings: too many words");
        return NULL;
    }
    Py_ssize_t base = PyDict_GET_SIZE(numbers);
    Word *words = PyMem_Malloc(sizeof(Word) * (size_t)(n ? n : 1));
    PyObject *fresh = PyDict_New();
    PyObject *new_terms = PyList_New(0);
    PyObject *result = NULL;
    if (words == NULL || fresh == NULL || new_terms == NULL) {
        if (words == NULL) {
            PyErr_NoMemory();
        }
        goto done;
    }
    /* Each word's term number: the field's, or the next free one for a term new to it. */
    Py_ssize_t w = 0;
    for (Py_ssize_t l = 0; l < n_lists; l++) {
        PyObject *stems = PySequence_Fast_GET_ITEM(lists, l);
        /* The same list again (the content field repeats the title's): its numbers again. */
        Py_ssize_t seen_at = 0, k = 0;
        for (; k < l && PySequence_Fast_GET_ITEM(lists, k) != stems; k++) {
            seen_at += PyList_GET_SIZE(PySequence_Fast_GET_ITEM(lists, k));
        }
        if (k < l) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(stems); i++, w++) {
                words[w] = WORD(WORD_TERM(words[seen_at + i]), w);
            }
            continue;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(stems); i++, w++) {
            uint32_t termnum;
            int committed;
            if (term_number(numbers, fresh, new_terms, base, PyList_GET_ITEM(stems, i), &termnum,
                            &committed) < 0) {
                goto done;
            }
            words[w] = WORD(termnum, w);
        }
    }
    result = encode_postings(words, n, base, new_terms, first, positions, boost, fieldboost);
done:
    PyMem_Free(words);
    Py_XDECREF(fresh);
    Py_XDECREF(new_terms);
    Py_DECREF(lists);
    return result;
}

/* doc_postings for a text given as its words' numbers in a vocabulary (`ids`: uint32s, in
   the machine's order) whose stems `stems` lists. `fieldmap` (uint32s too, grown here to
   the vocabulary's size) keeps each number's term number in the field plus one, 0 for
   none yet: a word's term number is read from it, and only a number it lacks is looked up
   by its stem. Only term numbers from `numbers` go in, never fresh ones (the caller may
   drop the document). */
static PyObject *
doc_postings_ids(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"numbers", "fieldmap", "stems", "ids", "first", "positions",
                            "boost", "fieldboost", NULL};
    PyObject *numbers, *fieldmap, *stems;
    Py_buffer ids;
    long long first;
    int positions;
    double boost, fieldboost;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!y*Lpdd:doc_postings_ids", names,
                                     &PyDict_Type, &numbers, &PyByteArray_Type, &fieldmap,
                                     &PyList_Type, &stems, &ids, &first, &positions, &boost,
                                     &fieldboost)) {
        return NULL;
    }
    Word *words = NULL;
    PyObject *fresh = NULL, *new_terms = NULL, *result = NULL;
    if (ids.len % 4 != 0) {
        PyErr_SetString(PyExc_ValueError, "doc_postings_ids: ids must be 4-byte numbers");
        goto done;
    }
    Py_ssize_t n = ids.len / 4;
    if ((uint64_t)n > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "doc_postings: too many words");
        goto done;
    }
    Py_ssize_t vocabulary = PyList_GET_SIZE(stems);
    Py_ssize_t mapped = PyByteArray_GET_SIZE(fieldmap) / 4;
    if (mapped < vocabulary) {
        Py_ssize_t grown = vocabulary > 2 * mapped ? vocabulary : 2 * mapped;
        if (PyByteArray_Resize(fieldmap, grown * 4) < 0) {
            goto done;
        }
        memset(PyByteArray_AS_STRING(fieldmap) + mapped * 4, 0, (size_t)(grown - mapped) * 4);
    }
    uint32_t *map = (uint32_t *)PyByteArray_AS_STRING(fieldmap);
    Py_ssize_t base = PyDict_GET_SIZE(numbers);
    words = PyMem_Malloc(sizeof(Word) * (size_t)(n ? n : 1));
    fresh = PyDict_New();
    new_terms = PyList_New(0);
    if (words == NULL || fresh == NULL || new_terms == NULL) {
        if (words == NULL) {
            PyErr_NoMemory();
        }
        goto done;
    }
    const char *src = ids.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t id;
        memcpy(&id, src + 4 * i, 4);
        if ((Py_ssize_t)id >= vocabulary) {
            PyErr_SetString(PyExc_ValueError, "doc_postings_ids: a word's number is past the stems");
            goto done;
        }
        uint32_t termnum = map[id];
        if (termnum != 0) {
            termnum--;
        }
        else {
            int committed;
            if (term_number(numbers, fresh, new_terms, base, PyList_GET_ITEM(stems, id), &termnum,
                            &committed) < 0) {
                goto done;
            }
            if (committed) {
                map[id] = termnum + 1;
            }
        }
        words[i] = WORD(termnum, i);
    }
    result = encode_postings(words, n, base, new_terms, first, positions, boost, fieldboost);
done:
    PyMem_Free(words);
    Py_XDECREF(fresh);
    Py_XDECREF(new_terms);
    PyBuffer_Release(&ids);
    return result;
}

/* -- a text's stems, run by run ---------------------------------------------------------- */

/* Whether a character can be part of a word of the patterns run_stems is for
   (analysis._SPACE_FREE_PATTERNS: \w, an apostrophe or a dot, where \w is what Python's re
   takes it for in a str pattern: alphanumeric, or "_"). A word never spans any other
   character, so a text's words are those of its runs of these, one run after another. */
static inline int
in_run(Py_UCS4 ch)
{
    if (ch < 128) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '_' || ch == '\'' || ch == '.';
    }
    return Py_UNICODE_ISALNUM(ch);
}

/* run_stems and run_ids: the cache gives a run's stems as a tuple (gathered in a list), or
   its words' numbers as bytes (gathered in bytes). */
static PyObject *
runs(PyObject *args, int as_ids)
{
    PyObject *text, *cache, *leads, *lead_of;
    const char *edge;
    Py_ssize_t edge_len;
    if (!PyArg_ParseTuple(args, as_ids ? "UO!O!s#O:run_ids" : "UO!O!s#O:run_stems", &text,
                          &PyDict_Type, &cache, &PyDict_Type, &leads, &edge, &edge_len,
                          &lead_of)) {
        return NULL;
    }
    const char *name = as_ids ? "run_ids" : "run_stems";
    unsigned char is_edge[128] = {0};
    for (Py_ssize_t i = 0; i < edge_len; i++) {
        if ((unsigned char)edge[i] >= 128) {
            PyErr_Format(PyExc_ValueError, "%s: edge characters must be ASCII", name);
            return NULL;
        }
        is_edge[(unsigned char)edge[i]] = 1;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    PyObject *found = as_ids ? NULL : PyList_New(0);
    Buf numbers = {0};
    if (!as_ids && found == NULL) {
        return NULL;
    }
    long long first = 0;
    int first_known = 0;
    Py_ssize_t i = 0;
    while (i < len) {
        if (!in_run(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < len && in_run(PyUnicode_READ(kind, data, i))) {
            i++;
        }
        /* The run text[start:i], its edge punctuation stripped (as str.strip(edge)). */
        Py_ssize_t s = start, e = i;
        while (s < e) {
            Py_UCS4 c = PyUnicode_READ(kind, data, s);
            if (c >= 128 || !is_edge[c]) {
                break;
            }
            s++;
        }
        while (e > s) {
            Py_UCS4 c = PyUnicode_READ(kind, data, e - 1);
            if (c >= 128 || !is_edge[c]) {
                break;
            }
            e--;
        }
        PyObject *piece = PyUnicode_Substring(text, s, e);
        if (piece == NULL) {
            goto fail;
        }
        PyObject *value = PyDict_GetItemWithError(cache, piece);
        if (value != NULL) {
            Py_INCREF(value);
        }
        else if (!PyErr_Occurred()) {
            value = PyObject_GetItem(cache, piece); /* the cache's __missing__ */
        }
        int ok = value != NULL && (as_ids ? PyBytes_Check(value) : PyTuple_Check(value));
        if (ok && as_ids) {
            ok = buf_put(&numbers, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)) == 0;
        }
        else if (ok) {
            for (Py_ssize_t k = 0; ok && k < PyTuple_GET_SIZE(value); k++) {
                ok = PyList_Append(found, PyTuple_GET_ITEM(value, k)) == 0;
            }
        }
        else if (value != NULL) {
            PyErr_Format(PyExc_TypeError, "%s: the cache must give %s", name,
                         as_ids ? "bytes" : "tuples");
        }
        Py_XDECREF(value);
        if (!ok) {
            Py_DECREF(piece);
            goto fail;
        }
        if (!first_known) {
            /* Words before the first kept one: the first position. */
            PyObject *lead = PyDict_GetItemWithError(leads, piece);
            if (lead != NULL) {
                Py_INCREF(lead);
            }
            else if (!PyErr_Occurred()) {
                lead = PyObject_CallFunctionObjArgs(lead_of, cache, piece, NULL);
            }
            long count = -1, at = -1;
            if (lead != NULL && PyTuple_Check(lead) && PyTuple_GET_SIZE(lead) == 2) {
                count = PyLong_AsLong(PyTuple_GET_ITEM(lead, 0));
                at = PyLong_AsLong(PyTuple_GET_ITEM(lead, 1));
            }
            else if (lead != NULL) {
                PyErr_Format(PyExc_TypeError, "%s: a lead must be a pair", name);
            }
            Py_XDECREF(lead);
            if (PyErr_Occurred()) {
                Py_DECREF(piece);
                goto fail;
            }
            if (at >= 0) {
                first += at;
                first_known = 1;
            }
            else {
                first += count;
            }
        }
        Py_DECREF(piece);
    }
    if (!first_known) {
        first = 0;
    }
    if (as_ids) {
        PyObject *result = Py_BuildValue("(y#L)", numbers.data ? numbers.data : "", numbers.len,
                                         first);
        buf_free(&numbers);
        return result;
    }
    return Py_BuildValue("(NL)", found, first);
fail:
    Py_XDECREF(found);
    buf_free(&numbers);
    return NULL;
}

static PyObject *
run_stems(PyObject *module, PyObject *args)
{
    return runs(args, 0);
}

static PyObject *
run_ids(PyObject *module, PyObject *args)
{
    return runs(args, 1);
}

/* -- position lists, for phrase matching (masks._position_table) ------------------------ */

/* The positions of one of Whoosh's encoded position lists (formats.Positions: a 4-byte
 * count, then a protocol-2 pickle of the list of position deltas, its STOP often cut off)
 * appended to `out` as int64 (the deltas summed). 0 when read, -1 for anything else (no
 * exception set), -2 when out of memory. */
static int
decode_positions(const unsigned char *p, Py_ssize_t n, Buf *out)
{
    /* count (4 bytes), PROTO 2, EMPTY_LIST, BINPUT or LONG_BINPUT */
    if (n < 8 || p[4] != 0x80 || p[5] != 2 || p[6] != ']') {
        return -1;
    }
    Py_ssize_t at = 7;
    if (p[at] == 'q') {
        at += 2;
    } else if (p[at] == 'r') {
        at += 5;
    }
    int64_t position = 0;
    while (at < n) {
        unsigned char op = p[at++];
        int64_t delta;
        if (op == 'K' && at + 1 <= n) {
            delta = p[at];
            at += 1;
        } else if (op == 'M' && at + 2 <= n) {
            delta = (int64_t)p[at] | ((int64_t)p[at + 1] << 8);
            at += 2;
        } else if (op == 'J' && at + 4 <= n) {
            /* signed, little-endian, as pickle writes it */
            uint32_t v = (uint32_t)p[at] | ((uint32_t)p[at + 1] << 8) |
                         ((uint32_t)p[at + 2] << 16) | ((uint32_t)p[at + 3] << 24);
            delta = (int32_t)v;
            at += 4;
        } else if (op == '(') {
            continue; /* MARK: pickle appends a long list in batches of 1,000 */
        } else if (op == 'a' || op == 'e') {
            continue;
        } else if (op == '.' && at == n) {
            break;
        } else {
            return -1;
        }
        position += delta;
        if (buf_put(out, &position, 8) < 0) {
            return -2;
        }
    }
    return 0;
}

/* Every position of every value of `values` (a list of bytes: Whoosh's encoded position
 * lists, see decode_positions) as two int64 buffers: the index of the value each position
 * came from, and the position. Raises ValueError for anything else; the caller then
 * decodes with pickle. */
static PyObject *
position_table(PyObject *module, PyObject *args)
{
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) {
        return NULL;
    }
    Buf owners = {0}, positions = {0};
    Py_ssize_t count = PyList_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t before = positions.len;
        PyObject *item = PyList_GET_ITEM(values, i);
        if (!PyBytes_Check(item)) {
            goto unexpected;
        }
        int got = decode_positions((const unsigned char *)PyBytes_AS_STRING(item),
                                   PyBytes_GET_SIZE(item), &positions);
        if (got == -1) {
            goto unexpected;
        }
        if (got == -2) {
            goto fail;
        }
        int64_t owner = i;
        for (Py_ssize_t at = before; at < positions.len; at += 8) {
            if (buf_put(&owners, &owner, 8) < 0) {
                goto fail;
            }
        }
    }
    PyObject *result = Py_BuildValue(
        "(y#y#)", owners.data ? owners.data : "", owners.len,
        positions.data ? positions.data : "", positions.len);
    buf_free(&owners);
    buf_free(&positions);
    return result;
unexpected:
    PyErr_SetString(PyExc_ValueError, "unexpected encoding of positions");
fail:
    buf_free(&owners);
    buf_free(&positions);
    return NULL;
}

static int
compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether each candidate holds a phrase: `values` has, for each word of the phrase, a
 * tuple (joined, starts, ends): the encoded positions (see decode_positions) of that word
 * in candidate c are the bytes of `joined` from starts[c] to ends[c] (int64 each), for
 * every candidate, in the same order. A candidate fits when some position of each word
 * stands 1 to `slop` after the nearest position before it reached by the word before
 * (the first word's positions are all reached): what masks._phrase_docs works out with
 * arrays. One byte per candidate, 1 where it fits. ValueError for positions encoded
 * otherwise. */
static PyObject *
phrase_fits(PyObject *module, PyObject *args)
{
    PyObject *values;
    Py_ssize_t slop;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &values, &slop)) {
        return NULL;
    }
    Py_ssize_t words = PyList_GET_SIZE(values);
    Py_ssize_t candidates = words ? -1 : 0;
    Py_buffer *views = PyMem_Calloc((size_t)(words ? words : 1) * 3, sizeof(Py_buffer));
    Py_ssize_t held = 0; /* views acquired */
    PyObject *result = NULL;
    Buf reached = {0}, next = {0};
    if (views == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < words; k++) {
        PyObject *item = PyList_GET_ITEM(values, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
            PyErr_SetString(PyExc_ValueError, "(joined, starts, ends) expected for each word");
            goto done;
        }
        for (int part = 0; part < 3; part++) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, part), &views[3 * k + part],
                                   PyBUF_SIMPLE) < 0) {
                goto done;
            }
            held++;
        }
        Py_buffer *joined = &views[3 * k], *starts = &views[3 * k + 1], *ends = &views[3 * k + 2];
        if (starts->len % 8 || ends->len != starts->len ||
            (candidates >= 0 && starts->len / 8 != candidates)) {
            PyErr_SetString(PyExc_ValueError, "starts and ends of one length each expected");
            goto done;
        }
        candidates = starts->len / 8;
        const int64_t *first = starts->buf, *last = ends->buf;
        for (Py_ssize_t c = 0; c < candidates; c++) {
            if (first[c] < 0 || first[c] > last[c] || last[c] > joined->len) {
                PyErr_SetString(PyExc_ValueError, "a value outside its bytes");
                goto done;
            }
        }
    }
    result = PyBytes_FromStringAndSize(NULL, candidates);
    if (result == NULL) {
        goto done;
    }
    unsigned char *fits = (unsigned char *)PyBytes_AS_STRING(result);
    for (Py_ssize_t c = 0; c < candidates; c++) {
        reached.len = 0;
        for (Py_ssize_t k = 0; k < words; k++) {
            const unsigned char *joined = views[3 * k].buf;
            int64_t from = ((const int64_t *)views[3 * k + 1].buf)[c];
            int64_t to = ((const int64_t *)views[3 * k + 2].buf)[c];
            next.len = 0;
            int got = decode_positions(joined + from, (Py_ssize_t)(to - from), &next);
            if (got == -1) {
                PyErr_SetString(PyExc_ValueError, "unexpected encoding of positions");
                Py_CLEAR(result);
                goto done;
            }
            if (got == -2) {
                Py_CLEAR(result);
                goto done;
            }
            int64_t *at = (int64_t *)next.data;
            Py_ssize_t count = next.len / 8;
            for (Py_ssize_t i = 1; i < count; i++) {
                if (at[i] <= at[i - 1]) { /* not rising: sorted, once each */
                    qsort(at, (size_t)count, 8, compare_int64);
                    Py_ssize_t kept = 1;
                    for (Py_ssize_t j = 1; j < count; j++) {
                        if (at[j] != at[kept - 1]) {
                            at[kept++] = at[j];
                        }
                    }
                    count = kept;
                    break;
                }
            }
            if (k > 0) {
                /* keep the positions 1 to slop after the nearest reached one before */
                const int64_t *before = (const int64_t *)reached.data;
                Py_ssize_t nbefore = reached.len / 8, j = 0, kept = 0;
                for (Py_ssize_t i = 0; i < count; i++) {
                    while (j < nbefore && before[j] < at[i]) {
                        j++;
                    }
                    if (j > 0 && at[i] - before[j - 1] <= slop) {
                        at[kept++] = at[i];
                    }
                }
                count = kept;
            }
            next.len = count * 8;
            Buf swap = reached;
            reached = next;
            next = swap;
            if (count == 0) {
                break;
            }
        }
        fits[c] = reached.len > 0;
    }
done:
    for (Py_ssize_t i = 0; i < held; i++) {
        PyBuffer_Release(&views[i]);
    }
    PyMem_Free(views);
    buf_free(&reached);
    buf_free(&next);
    return result;
}

/* -- posting lists, read back (masks._raw_list) ------------------------------------------ */

/* A reader of the few pickles a W3 block holds: tuples of numbers, None, and the rest
 * skipped. Any other opcode makes it fail, and the caller unpickles in Python. */
typedef struct {
    const unsigned char *p;
    Py_ssize_t at;
    Py_ssize_t n;
} PkReader;

static int
pkr_header(PkReader *r)
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
pkr_memo(PkReader *r)
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
pkr_number(PkReader *r, double *out)
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
static int
pkr_numbers(PkReader *r, Buf *out, Py_ssize_t *count)
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
        if (buf_put(out, &v, sizeof v) < 0) {
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
static int
pkr_values(PkReader *r, PyObject *out, Buf *joined, Buf *ends, Py_ssize_t count)
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
            if (buf_put(joined, p + head, size) < 0) {
                return -2;
            }
            int64_t end = (int64_t)joined->len;
            if (buf_put(ends, &end, 8) < 0) {
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

/* Every block of one W3 posting list (the `n` bytes at `p`: the postings file from the
 * list's magic on): its document numbers (each block's deltas summed) and weights appended
 * to `ids` and `weights` as int64 and float64, and with `values` (a list), its values as
 * bytes. `numbers` is scratch space. `decompress` is zlib.decompress, for blocks stored
 * compressed. 0 when read; -1 for an encoding this code does not read (no exception
 * set); -2 with an exception set. */
static int
decode_blocks(const unsigned char *p, Py_ssize_t n, const char *magic, Py_ssize_t magic_len,
              PyObject *decompress, Buf *ids, Buf *weights, Buf *numbers, PyObject *values,
              Buf *joined, Buf *ends)
{
    PyObject *inflated = NULL;
    if (n < magic_len || memcmp(p, magic, (size_t)magic_len) != 0) {
        return -1;
    }
    Py_ssize_t at = magic_len;
    int last = 0;
    while (!last) {
        if (at + 4 > n) {
            goto unexpected;
        }
        int32_t size = (int32_t)(((uint32_t)p[at] << 24) | ((uint32_t)p[at + 1] << 16) |
                                 ((uint32_t)p[at + 2] << 8) | (uint32_t)p[at + 3]);
        last = size < 0;
        Py_ssize_t length = size < 0 ? -(Py_ssize_t)size : size;
        at += 4;
        if (at + length > n) {
            goto unexpected;
        }
        /* The block's info: (postings, last id, highest weight, compression, lengths) */
        PkReader info = {p + at, 0, length};
        Py_ssize_t fields;
        numbers->len = 0;
        pkr_header(&info);
        int got = pkr_numbers(&info, numbers, &fields);
        if (got == -2) {
            goto fail;
        }
        if (got != 0 || fields != 6 || info.at >= info.n || info.p[info.at] != '.') {
            goto unexpected;
        }
        double *row = (double *)numbers->data;
        if (row[0] < 1 || row[0] > 1e9) {
            goto unexpected;
        }
        Py_ssize_t count = (Py_ssize_t)row[0];
        int compressed = row[3] != 0;
        info.at += 1;
        /* The block's data: (id deltas, weights, values), compressed or not */
        PkReader data = {info.p + info.at, 0, info.n - info.at};
        if (compressed) {
            inflated = PyObject_CallFunction(
                decompress, "y#", (const char *)data.p, data.n);
            if (inflated == NULL) {
                goto fail;
            }
            data.p = (const unsigned char *)PyBytes_AS_STRING(inflated);
            data.n = PyBytes_GET_SIZE(inflated);
        }
        pkr_header(&data);
        numbers->len = 0;
        Py_ssize_t found;
        got = pkr_numbers(&data, numbers, &found);
        if (got == -2) {
            goto fail;
        }
        if (got != 0 || found != count) {
            goto unexpected;
        }
        if (buf_reserve(ids, count * 8) < 0 || buf_reserve(weights, count * 8) < 0) {
            goto fail;
        }
        int64_t doc = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            doc += (int64_t)((double *)numbers->data)[i];
            buf_put(ids, &doc, 8); /* reserved above */
        }
        /* weights: None (all 1), one number (all the same) or a tuple of them */
        if (data.at >= data.n) {
            goto unexpected;
        }
        numbers->len = 0;
        if (data.p[data.at] == 'N') {
            got = 1; /* None: every weight 1 */
            data.at += 1;
            double one = 1.0;
            if (buf_put(numbers, &one, 8) < 0) {
                goto fail;
            }
        } else {
            got = pkr_numbers(&data, numbers, &found);
            if (got == -2) {
                goto fail;
            }
            if (got < 0 || (got == 0 && found != count)) {
                goto unexpected;
            }
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            /* a tuple: its own weight each; one number (or None): the same for all */
            double *weight = (double *)numbers->data + (got == 0 ? i : 0);
            buf_put(weights, weight, 8); /* reserved above */
        }
        if (values != NULL || joined != NULL) {
            got = pkr_values(&data, values, joined, ends, count);
            if (got == -2) {
                goto fail;
            }
            if (got < 0) {
                goto unexpected;
            }
        }
        Py_CLEAR(inflated);
        at += length;
    }
    if (at != n) {
        return -1;
    }
    return 0;
unexpected:
    Py_XDECREF(inflated);
    return -1;
fail:
    Py_XDECREF(inflated);
    return -2;
}

/* One W3 posting list (the bytes of the postings file from its magic on): the document
 * numbers and the weights, as int64 and float64 bytes; with `with_values` 1, the values
 * too (a list of bytes); with 2, the values joined (bytes) and where each ends there
 * (int64 bytes). */
static PyObject *
decode_list(PyObject *module, PyObject *args)
{
    Py_buffer raw;
    const char *magic;
    Py_ssize_t magic_len;
    PyObject *decompress;
    int with_values = 0;
    if (!PyArg_ParseTuple(args, "y*y#O|i", &raw, &magic, &magic_len, &decompress,
                          &with_values)) {
        return NULL;
    }
    if (with_values < 0 || with_values > 2) {
        PyBuffer_Release(&raw);
        PyErr_SetString(PyExc_ValueError, "with_values is 0, 1 or 2");
        return NULL;
    }
    Buf ids = {0}, weights = {0}, numbers = {0}, joined = {0}, ends = {0};
    PyObject *result = NULL;
    PyObject *values = with_values == 1 ? PyList_New(0) : NULL;
    if (with_values != 1 || values != NULL) {
        int got = decode_blocks(raw.buf, raw.len, magic, magic_len, decompress, &ids,
                                &weights, &numbers, values, with_values == 2 ? &joined : NULL,
                                &ends);
        const char *i = ids.data ? ids.data : "", *w = weights.data ? weights.data : "";
        if (got == -1) {
            PyErr_SetString(PyExc_ValueError, "not a posting list this code reads");
        } else if (got == 0 && with_values == 1) {
            result = Py_BuildValue("(y#y#O)", i, ids.len, w, weights.len, values);
        } else if (got == 0 && with_values == 2) {
            result = Py_BuildValue("(y#y#y#y#)", i, ids.len, w, weights.len,
                                   joined.data ? joined.data : "", joined.len,
                                   ends.data ? ends.data : "", ends.len);
        } else if (got == 0) {
            result = Py_BuildValue("(y#y#)", i, ids.len, w, weights.len);
        }
    }
    Py_XDECREF(values);
    buf_free(&ids);
    buf_free(&weights);
    buf_free(&numbers);
    buf_free(&joined);
    buf_free(&ends);
    PyBuffer_Release(&raw);
    return result;
}

/* Many W3 posting lists lying in `joined` (list i: the `lengths[i]` bytes from
 * `starts[i]`, int64 each): all their document numbers and weights, one list after
 * another (int64 and float64 bytes), and each list's number of postings (int64 bytes).
 * ValueError for a list this code does not read: the caller reads them otherwise. */
static PyObject *
decode_lists(PyObject *module, PyObject *args)
{
    Py_buffer joined, starts, lengths;
    const char *magic;
    Py_ssize_t magic_len;
    PyObject *decompress;
    if (!PyArg_ParseTuple(args, "y*y*y*y#O", &joined, &starts, &lengths, &magic, &magic_len,
                          &decompress)) {
        return NULL;
    }
    Buf ids = {0}, weights = {0}, numbers = {0}, counts = {0};
    PyObject *result = NULL;
    Py_ssize_t lists = starts.len / 8;
    int got = 0;
    if (starts.len % 8 || lengths.len != starts.len) {
        got = -1;
    }
    const int64_t *start = (const int64_t *)starts.buf;
    const int64_t *length = (const int64_t *)lengths.buf;
    for (Py_ssize_t i = 0; i < lists && got == 0; i++) {
        if (start[i] < 0 || length[i] < 0 || start[i] + length[i] > joined.len) {
            got = -1;
            break;
        }
        Py_ssize_t before = ids.len;
        got = decode_blocks((const unsigned char *)joined.buf + start[i], length[i], magic,
                            magic_len, decompress, &ids, &weights, &numbers, NULL, NULL, NULL);
        int64_t count = (int64_t)((ids.len - before) / 8);
        if (got == 0 && buf_put(&counts, &count, 8) < 0) {
            got = -2;
        }
    }
    if (got == -1) {
        PyErr_SetString(PyExc_ValueError, "not a posting list this code reads");
    } else if (got == 0) {
        result = Py_BuildValue("(y#y#y#)", ids.data ? ids.data : "", ids.len,
                               weights.data ? weights.data : "", weights.len,
                               counts.data ? counts.data : "", counts.len);
    }
    buf_free(&ids);
    buf_free(&weights);
    buf_free(&numbers);
    buf_free(&counts);
    PyBuffer_Release(&joined);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&lengths);
    return result;
}

static uint64_t
be_uint(const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* The items of a W3 terms table (an OrderedHashReader's: key length and value length as
 * big-endian int32, the key, the value) in `table` from `pos` on, while their keys start
 * with `start` (a field's number, then a word's first bytes): for each, its word (the key
 * after its first `field_size` bytes, as str), and from its row (W3TermInfo: statistics
 * of `stats_size` bytes, then the list's offset, 8 bytes, and length, 4), its document
 * frequency, offset and length. Returns (pos after the last item read, whether an item
 * not starting so was reached, words, frequencies, offsets, lengths; int64 bytes each).
 * Stops at the end of `table` or before an item that does not lie whole in it.
 * ValueError for a row with its postings inline (the caller reads the table otherwise). */
static PyObject *
scan_terms(PyObject *module, PyObject *args)
{
    Py_buffer table;
    Py_ssize_t pos, field_size, stats_size;
    const char *start;
    Py_ssize_t start_len;
    if (!PyArg_ParseTuple(args, "y*ny#nn", &table, &pos, &start, &start_len, &field_size,
                          &stats_size)) {
        return NULL;
    }
    const unsigned char *p = table.buf;
    Py_ssize_t n = table.len;
    Buf dfs = {0}, offsets = {0}, lengths = {0};
    PyObject *words = PyList_New(0);
    PyObject *result = NULL;
    const char *error = NULL;
    int done = 0;
    if (words == NULL) {
        goto end;
    }
    if (pos < 0 || field_size < 0 || field_size > start_len || stats_size < 9) {
        error = "bad arguments";
        goto end;
    }
    while (pos + 8 <= n) {
        int64_t keylen = (int32_t)be_uint(p + pos, 4);
        int64_t datalen = (int32_t)be_uint(p + pos + 4, 4);
        if (keylen < 0 || datalen < 0) {
            error = "a damaged terms table";
            goto end;
        }
        if (pos + 8 + keylen + datalen > n) {
            break;
        }
        const unsigned char *key = p + pos + 8;
        const unsigned char *row = key + keylen;
        if (keylen < start_len || memcmp(key, start, (size_t)start_len) != 0) {
            done = 1;
            break;
        }
        if (datalen < stats_size + 12 || row[0] != 0) {
            error = "postings kept in the terms table";
            goto end;
        }
        PyObject *word = PyUnicode_DecodeUTF8((const char *)key + field_size,
                                              keylen - field_size, "strict");
        if (word == NULL) {
            goto end;
        }
        int failed = PyList_Append(words, word);
        Py_DECREF(word);
        if (failed) {
            goto end;
        }
        int64_t df = (int64_t)be_uint(row + 5, 4);
        int64_t offset = (int64_t)be_uint(row + stats_size, 8);
        int64_t length = (int64_t)be_uint(row + stats_size + 8, 4);
        if (buf_put(&dfs, &df, 8) < 0 || buf_put(&offsets, &offset, 8) < 0 ||
            buf_put(&lengths, &length, 8) < 0) {
            goto end;
        }
        pos += 8 + keylen + datalen;
    }
    result = Py_BuildValue("(niOy#y#y#)", pos, done, words, dfs.data ? dfs.data : "", dfs.len,
                           offsets.data ? offsets.data : "", offsets.len,
                           lengths.data ? lengths.data : "", lengths.len);
end:
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
    }
    Py_XDECREF(words);
    buf_free(&dfs);
    buf_free(&offsets);
    buf_free(&lengths);
    PyBuffer_Release(&table);
    return result;
}

/* pread `n` bytes at `at` of `fd` into `out`: 1 when all were read, 0 at the file's end,
 * -1 (errno set) on an error. */
static int
read_at(int fd, void *out, size_t n, int64_t at)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(fd, (char *)out + done, n - done, (off_t)(at + (int64_t)done));
        if (got < 0) {
            return -1;
        }
        if (got == 0) {
            return 0;
        }
        done += (size_t)got;
    }
    return 1;
}

/* One key's look-up in a terms table (see table_get_many), without the GIL: where its
 * value lies (*at, *size), or *size = -1 when the table does not have the key. 0 when
 * done, -1 for a failed read (errno set), -2 for a damaged table or a read past the end of
 * the file, -3 when out of memory. `item` is a buffer grown as needed. */
static int
probe_table(int fd, int64_t base, const int64_t *table, const char *key, Py_ssize_t klen,
            uint32_t keyhash, char **item, size_t *item_cap, int64_t *at, int64_t *size)
{
    *size = -1;
    int64_t start = table[2 * (keyhash & 255)], slots = table[2 * (keyhash & 255) + 1];
    if (slots <= 0) {
        return 0;
    }
    int64_t slot = (int64_t)((keyhash >> 8) % (uint64_t)slots);
    for (int64_t probe = 0; probe < slots; probe++) {
        unsigned char raw[12];
        int got = read_at(fd, raw, 12, base + start + slot * 12);
        if (got <= 0) {
            return got == 0 ? -2 : -1;
        }
        uint32_t slothash = (uint32_t)be_uint(raw, 4);
        int64_t itempos = (int64_t)be_uint(raw + 4, 8);
        if (itempos == 0) {
            return 0;
        }
        if (slothash == keyhash) {
            unsigned char head[8];
            got = read_at(fd, head, 8, base + itempos);
            if (got <= 0) {
                return got == 0 ? -2 : -1;
            }
            int64_t keylen = (int32_t)be_uint(head, 4);
            int64_t datalen = (int32_t)be_uint(head + 4, 4);
            if (keylen < 0 || datalen < 0) {
                return -2;
            }
            if (keylen == klen) {
                if ((size_t)keylen > *item_cap) {
                    char *bigger = realloc(*item, (size_t)keylen);
                    if (bigger == NULL) {
                        return -3;
                    }
                    *item = bigger;
                    *item_cap = (size_t)keylen;
                }
                if (keylen > 0) {
                    got = read_at(fd, *item, (size_t)keylen, base + itempos + 8);
                    if (got <= 0) {
                        return got == 0 ? -2 : -1;
                    }
                }
                if (memcmp(*item, key, (size_t)klen) == 0) {
                    *at = base + itempos + 8 + keylen;
                    *size = datalen;
                    return 0;
                }
            }
        }
        slot = slot + 1 < slots ? slot + 1 : 0;
    }
    return 0;
}

/* The values of many keys in a W3 terms table (an OrderedHashReader's, within file `fd`
 * from `base` on), as w3format._TermsTable.get finds one: `tables` is the 256 hash
 * tables' (start, number of slots) as int64 pairs; `hashes` each key's hash (uint32,
 * Whoosh's md5_hash). A key's table is its hash's low byte, its first slot the rest of
 * the hash modulo the slots; each slot (a big-endian uint32 hash and int64 position) is
 * probed in turn until an empty one, and an item whose key is the key gives its value.
 * The file is read with the GIL released (other threads search meanwhile). Returns a
 * list: each key's value (bytes) or None. OSError for a failed read, ValueError for a
 * damaged table. */
static PyObject *
table_get_many(PyObject *module, PyObject *args)
{
    int fd;
    long long base;
    Py_buffer tables, hashes;
    PyObject *keys;
    if (!PyArg_ParseTuple(args, "iLy*O!y*", &fd, &base, &tables, &PyList_Type, &keys,
                          &hashes)) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(keys);
    PyObject *result = NULL;
    const char *error = NULL;
    char *item = NULL;
    size_t item_cap = 0;
    const char **key_of = NULL;
    Py_ssize_t *length_of = NULL;
    int64_t *at = NULL, *size = NULL;
    if (tables.len != 256 * 16 || hashes.len != count * 4) {
        error = "tables or hashes of the wrong size";
        goto end;
    }
    /* The keys, read while the GIL is held; the list (the caller's own) keeps them. */
    size_t n = (size_t)(count ? count : 1);
    key_of = PyMem_Malloc(n * sizeof(*key_of));
    length_of = PyMem_Malloc(n * sizeof(*length_of));
    at = PyMem_Malloc(n * sizeof(*at));
    size = PyMem_Malloc(n * sizeof(*size));
    if (key_of == NULL || length_of == NULL || at == NULL || size == NULL) {
        PyErr_NoMemory();
        goto end;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *key = PyList_GET_ITEM(keys, k);
        if (!PyBytes_Check(key)) {
            error = "keys must be bytes";
            goto end;
        }
        key_of[k] = PyBytes_AS_STRING(key);
        length_of[k] = PyBytes_GET_SIZE(key);
    }
    const int64_t *table = tables.buf;
    const uint32_t *hash_of = hashes.buf;
    int failed = 0;
    char *values = NULL; /* the values found, one after another (at[k]: where each starts) */
    size_t values_len = 0, values_cap = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < count && !failed; k++) {
        int64_t where = 0; /* set whenever size[k] >= 0; gcc cannot tell */
        failed = probe_table(fd, base, table, key_of[k], length_of[k], hash_of[k], &item,
                             &item_cap, &where, &size[k]);
        if (failed || size[k] < 0) {
            continue;
        }
        if (values_len + (size_t)size[k] > values_cap) {
            size_t cap = 2 * values_cap + (size_t)size[k] + 4096;
            char *bigger = realloc(values, cap);
            if (bigger == NULL) {
                failed = -3;
                continue;
            }
            values = bigger;
            values_cap = cap;
        }
        int got = size[k] ? read_at(fd, values + values_len, (size_t)size[k], where) : 1;
        if (got <= 0) {
            failed = got == 0 ? -2 : -1;
            continue;
        }
        at[k] = (int64_t)values_len;
        values_len += (size_t)size[k];
    }
    Py_END_ALLOW_THREADS
    if (failed == -1) {
        PyErr_SetFromErrno(PyExc_OSError);
    }
    if (failed) {
        free(values);
        values = NULL;
    }
    if (failed == -1) {
        goto end;
    }
    if (failed == -2) {
        error = "a damaged terms table, or one past the end of its file";
        goto end;
    }
    if (failed == -3) {
        PyErr_NoMemory();
        goto end;
    }
    result = PyList_New(count);
    if (result == NULL) {
        goto end;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *found = size[k] < 0 ? Py_NewRef(Py_None)
                                      : PyBytes_FromStringAndSize(values + at[k], size[k]);
        if (found == NULL) {
            free(values);
            goto end;
        }
        PyList_SET_ITEM(result, k, found);
    }
    free(values);
end:
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
    }
    if (PyErr_Occurred()) {
        Py_CLEAR(result);
    }
    free(item);
    PyMem_Free(key_of);
    PyMem_Free(length_of);
    PyMem_Free(at);
    PyMem_Free(size);
    PyBuffer_Release(&tables);
    PyBuffer_Release(&hashes);
    return result;
}

/* The first index from `from` on (up to `n`) where the rising `a` reaches `value`, given
 * a[from] < value: steps doubling until past it, then a binary search of the last step. */
static Py_ssize_t
gallop(const int64_t *a, Py_ssize_t from, Py_ssize_t n, int64_t value)
{
    Py_ssize_t step = 1, lo = from, hi = from + 1;
    while (hi < n && a[hi] < value) {
        lo = hi;
        step *= 2;
        hi = from + step;
    }
    if (hi > n) {
        hi = n;
    }
    while (lo < hi) { /* the answer is in (lo, hi]: a[lo] < value <= a[hi], or hi == n */
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < value) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Where two sorted arrays of distinct int64 (posting lists' document numbers) have the
 * same number: for each such number, its index in `a` and in `b`, in order (int64 bytes
 * each). A merge, galloping through the longer array when one is much shorter.
 * ValueError when either array is not rising. */
static PyObject *
common_indices(PyObject *module, PyObject *args)
{
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b)) {
        return NULL;
    }
    PyObject *result = NULL;
    Buf ia = {0}, ib = {0};
    const char *error = NULL;
    if (a.len % 8 || b.len % 8) {
        error = "arrays of int64 expected";
        goto end;
    }
    const int64_t *x = a.buf, *y = b.buf;
    Py_ssize_t n = a.len / 8, m = b.len / 8;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (x[i] <= x[i - 1]) {
            error = "numbers not rising";
            goto end;
        }
    }
    for (Py_ssize_t j = 1; j < m; j++) {
        if (y[j] <= y[j - 1]) {
            error = "numbers not rising";
            goto end;
        }
    }
    Py_ssize_t i = 0, j = 0;
    while (i < n && j < m) {
        if (x[i] == y[j]) {
            int64_t pi = i, pj = j;
            if (buf_put(&ia, &pi, 8) < 0 || buf_put(&ib, &pj, 8) < 0) {
                goto end;
            }
            i++;
            j++;
        } else if (x[i] < y[j]) {
            i = gallop(x, i, n, y[j]);
        } else {
            j = gallop(y, j, m, x[i]);
        }
    }
    result = Py_BuildValue("(y#y#)", ia.data ? ia.data : "", ia.len, ib.data ? ib.data : "",
                           ib.len);
end:
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
    }
    buf_free(&ia);
    buf_free(&ib);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

/* -- scores, for ranking (topdocs._add_term) ------------------------------------------ */

/* Add one piece of a word's posting list to a query's scores: for each posting i, the
 * document d = offset + ids[i] gains the word's score there, Whoosh's BM25
 * idf * ((tf * (k1 + 1)) / (tf + norms[d])) (norms: each document's K1 * ((1 - B) + B *
 * length / average), or tf itself when norms is None), times boost unless boost is 1; and
 * seen[d] is set to 1 (flags, 1 byte each) or raised by 1 (counts, 2 bytes each). The
 * operations are numpy's, in its order, on doubles (built without contracting a product
 * and a sum into one rounding: -ffp-contract=off), so the sums are the same. */
static PyObject *
add_scores(PyObject *module, PyObject *args)
{
    Py_buffer total, seen, ids, tfs, norms = {0};
    Py_ssize_t offset;
    PyObject *norms_obj;
    double idf, k1, boost;
    if (!PyArg_ParseTuple(args, "w*w*ny*y*Oddd", &total, &seen, &offset, &ids, &tfs,
                          &norms_obj, &idf, &k1, &boost)) {
        return NULL;
    }
    int have_norms = norms_obj != Py_None;
    if (have_norms && PyObject_GetBuffer(norms_obj, &norms, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&total);
        PyBuffer_Release(&seen);
        PyBuffer_Release(&ids);
        PyBuffer_Release(&tfs);
        return NULL;
    }
    Py_ssize_t docs = total.len / 8;
    Py_ssize_t n = ids.len / 8;
    Py_ssize_t seen_size = docs ? seen.len / docs : 0;
    const char *error = NULL;
    if (total.len % 8 || ids.len % 8 || tfs.len != ids.len || offset < 0 ||
        (have_norms && norms.len != total.len) || (seen_size != 1 && seen_size != 2) ||
        seen.len != docs * seen_size) {
        error = "arrays of mismatched sizes";
    }
    if (error == NULL) {
        double *sum = (double *)total.buf;
        const int64_t *doc = (const int64_t *)ids.buf;
        const double *tf = (const double *)tfs.buf;
        const double *norm = have_norms ? (const double *)norms.buf : NULL;
        unsigned char *flag = (unsigned char *)seen.buf;
        uint16_t *count = (uint16_t *)seen.buf;
        double k1_plus_1 = k1 + 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t d = doc[i] + offset;
            if (doc[i] < 0 || d >= docs) {
                error = "a document number out of range";
                break;
            }
            double term = norm ? idf * ((tf[i] * k1_plus_1) / (tf[i] + norm[d])) : tf[i];
            if (boost != 1.0) {
                term = term * boost;
            }
            sum[d] += term;
            if (seen_size == 1) {
                flag[d] = 1;
            } else {
                count[d] += 1;
            }
        }
    }
    PyBuffer_Release(&total);
    PyBuffer_Release(&seen);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&tfs);
    if (have_norms) {
        PyBuffer_Release(&norms);
    }
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Every row's similarity to a query, from int8 codes (semantic.SemanticIndex.similarities):
 * out[i] = (double)sum_j(codes[i][j] * query[j]) * unit * scales[i], in float32, where query is
 * int16 and the sum an exact integer: with |codes| <= 127 and |query| <= 16,383
 * (semantic.QUERY_MAX), each of SSE2's four int32 sums stays within range for rows of up to
 * 4,096 numbers. SSE2 where there is SSE2 (every x86-64), else plain C: the same integers. */
/* Rows read ahead of the one being summed (the hardware's own prefetching leaves the loop
 * waiting on memory half the time). */
#define PREFETCH_ROWS 8

static int64_t
row_dot(const int8_t *row, const int16_t *query, Py_ssize_t dims)
{
    Py_ssize_t j = 0;
    int64_t sum = 0;
#if defined(__SSE2__)
    __m128i acc = _mm_setzero_si128();
    const __m128i zero = _mm_setzero_si128();
    for (; j + 16 <= dims; j += 16) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(row + j));
        __m128i sign = _mm_cmpgt_epi8(zero, bytes);
        __m128i low = _mm_unpacklo_epi8(bytes, sign);
        __m128i high = _mm_unpackhi_epi8(bytes, sign);
        __m128i q_low = _mm_loadu_si128((const __m128i *)(query + j));
        __m128i q_high = _mm_loadu_si128((const __m128i *)(query + j + 8));
        acc = _mm_add_epi32(acc, _mm_madd_epi16(low, q_low));
        acc = _mm_add_epi32(acc, _mm_madd_epi16(high, q_high));
    }
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, acc);
    sum = (int64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
#endif
    for (; j < dims; j++) {
        sum += (int32_t)row[j] * (int32_t)query[j];
    }
    return sum;
}

static PyObject *
int8_similarities(PyObject *module, PyObject *args)
{
    Py_buffer codes, scales, query, out;
    double unit;
    if (!PyArg_ParseTuple(args, "y*y*y*dw*", &codes, &scales, &query, &unit, &out)) {
        return NULL;
    }
    Py_ssize_t rows = scales.len / 4;
    Py_ssize_t dims = query.len / 2;
    const char *error = NULL;
    if (scales.len % 4 || query.len % 2 || out.len != scales.len || codes.len != rows * dims) {
        error = "arrays of mismatched sizes";
    } else if (dims > 4096) {
        error = "rows of more than 4,096 dimensions";
    }
    if (error == NULL) {
        const int8_t *code = (const int8_t *)codes.buf;
        const int16_t *q = (const int16_t *)query.buf;
        const float *scale = (const float *)scales.buf;
        float *result = (float *)out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < rows; i++) {
#if defined(__GNUC__)
            if (i + PREFETCH_ROWS < rows) {
                const int8_t *ahead = code + (i + PREFETCH_ROWS) * dims;
                for (Py_ssize_t b = 0; b < dims; b += 64) {
                    __builtin_prefetch(ahead + b);
                }
            }
#endif
            double dot = (double)row_dot(code + i * dims, q, dims);
            result[i] = (float)(dot * unit * (double)scale[i]);
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&codes);
    PyBuffer_Release(&scales);
    PyBuffer_Release(&query);
    PyBuffer_Release(&out);
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The postings of a prefix's words (masks.pattern_postings), scored as topdocs._pattern_scores
 * scores them: posting i, of word word_of[i], adds idfs[word_of[i]] * ((tf * (k1 + 1)) /
 * (tf + norms[d])) (times boost unless it is 1) to total[d], d = ids[i], in the order of
 * the postings (numpy's bincount's), and sets seen[d]. */
static PyObject *
add_word_scores(PyObject *module, PyObject *args)
{
    Py_buffer total, seen, ids, tfs, word_of, idfs, norms;
    double k1, boost;
    if (!PyArg_ParseTuple(args, "w*w*y*y*y*y*y*dd", &total, &seen, &ids, &tfs, &word_of,
                          &idfs, &norms, &k1, &boost)) {
        return NULL;
    }
    Py_ssize_t docs = total.len / 8;
    Py_ssize_t n = ids.len / 8;
    Py_ssize_t words = idfs.len / 8;
    const char *error = NULL;
    if (total.len % 8 || ids.len % 8 || tfs.len != ids.len || word_of.len != n * 4 ||
        idfs.len % 8 || norms.len != total.len || seen.len != docs) {
        error = "arrays of mismatched sizes";
    }
    if (error == NULL) {
        double *sum = (double *)total.buf;
        unsigned char *flag = (unsigned char *)seen.buf;
        const int64_t *doc = (const int64_t *)ids.buf;
        const double *tf = (const double *)tfs.buf;
        const int32_t *word = (const int32_t *)word_of.buf;
        const double *idf = (const double *)idfs.buf;
        const double *norm = (const double *)norms.buf;
        double k1_plus_1 = k1 + 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t d = doc[i];
            int32_t w = word[i];
            if (d < 0 || d >= docs || w < 0 || w >= words) {
                error = "a document or word number out of range";
                break;
            }
            double term = idf[w] * ((tf[i] * k1_plus_1) / (tf[i] + norm[d]));
            if (boost != 1.0) {
                term = term * boost;
            }
            sum[d] += term;
            flag[d] = 1;
        }
    }
    PyBuffer_Release(&total);
    PyBuffer_Release(&seen);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&tfs);
    PyBuffer_Release(&word_of);
    PyBuffer_Release(&idfs);
    PyBuffer_Release(&norms);
    if (error != NULL) {
        PyErr_SetString(PyExc_ValueError, error);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode_list", decode_list, METH_VARARGS,
     "decode_list(raw, magic, decompress, with_values=0)\n"
     "    -> (ids, weights[, values | joined, ends]), int64 and float64 bytes[, a list of\n"
     "    bytes (with_values 1) | the values joined and where each ends (with_values 2)]\n\n"
     "A W3 posting list's document numbers, weights and values; see w3format.raw_list."},
    {"decode_lists", decode_lists, METH_VARARGS,
     "decode_lists(joined, starts, lengths, magic, decompress) -> (ids, weights, counts)\n\n"
     "Many W3 posting lists in one call; see w3format.prefix_postings."},
    {"scan_terms", scan_terms, METH_VARARGS,
     "scan_terms(table, pos, start, field_size, stats_size)\n"
     "    -> (pos, done, words, frequencies, offsets, lengths)\n\n"
     "A W3 terms table's words from a prefix on, with their rows' figures; see\n"
     "w3format.prefix_postings."},
    {"table_get_many", table_get_many, METH_VARARGS,
     "table_get_many(fd, base, tables, keys, hashes) -> [bytes | None, ...]\n\n"
     "Many keys' values in a W3 terms table; see w3format._TermsTable.get_many."},
    {"common_indices", common_indices, METH_VARARGS,
     "common_indices(a, b) -> (in_a, in_b), int64 bytes each\n\n"
     "Where two rising int64 arrays have the same numbers; see masks._common_indices."},
    {"int8_similarities", int8_similarities, METH_VARARGS,
     "int8_similarities(codes, scales, query, unit, out) -> None\n\n"
     "Every row's similarity to an int16 query, from int8 codes; see\n"
     "semantic.SemanticIndex.similarities."},
    {"add_scores", add_scores, METH_VARARGS,
     "add_scores(total, seen, offset, ids, tfs, norms, idf, k1, boost) -> None\n\n"
     "A piece of a word's postings added to a query's scores; see topdocs._add_term."},
    {"add_word_scores", add_word_scores, METH_VARARGS,
     "add_word_scores(total, seen, ids, tfs, word_of, idfs, norms, k1, boost) -> None\n\n"
     "A prefix's postings added to its scores; see topdocs._pattern_scores."},
    {"phrase_fits", phrase_fits, METH_VARARGS,
     "phrase_fits([(joined, starts, ends), ...], slop) -> bytes, one per candidate\n\n"
     "Which candidates hold a phrase, from its words' encoded positions; see\n"
     "w3format.phrase_fits."},
    {"position_table", position_table, METH_VARARGS,
     "position_table(values) -> (owners, positions), int64 bytes each\n\n"
     "Every position of Whoosh's encoded position lists; see masks._position_table."},
    {"write_blocks", (PyCFunction)(void (*)(void))write_blocks, METH_VARARGS | METH_KEYWORDS,
     "write_blocks(bounds, docs, weights, lengths, values, starts, ends, fixed_values, fixed,\n"
     "             mode, has_empty, int_weights, blocklimit, compression, min_compressed,\n"
     "             magic, pos, compress) -> (postings bytes, [term info rows])\n\n"
     "A chunk of terms' posting lists in Whoosh 3's format; see segments.w3write.FieldBlocks._chunk_in_c."},
    {"run_stems", run_stems, METH_VARARGS,
     "run_stems(text, cache, leads, edge, lead_of) -> (stems, first position)\n\n"
     "A text's stems from its white-space separated runs; see analysis._index_words."},
    {"run_ids", run_ids, METH_VARARGS,
     "run_ids(text, cache, leads, edge, lead_of) -> (numbers, first position)\n\n"
     "run_stems, with the cache giving a run's words' numbers (uint32 bytes), joined."},
    {"doc_postings", (PyCFunction)(void (*)(void))doc_postings, METH_VARARGS | METH_KEYWORDS,
     "doc_postings(numbers, stem_lists, first, positions, boost, fieldboost)\n"
     "    -> (base, new_terms, termnums, weights, sizes, values, postings, length, last_value)\n\n"
     "One document's postings in one text field; see segments.pool.FieldPostings.add_encoded."},
    {"doc_postings_ids", (PyCFunction)(void (*)(void))doc_postings_ids,
     METH_VARARGS | METH_KEYWORDS,
     "doc_postings_ids(numbers, fieldmap, stems, ids, first, positions, boost, fieldboost)\n"
     "    -> what doc_postings gives\n\n"
     "doc_postings of a text given as its words' numbers in a vocabulary."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pubsearch._speedups",
    "The hot loops of indexing, in C (see pubsearch.speedups).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
