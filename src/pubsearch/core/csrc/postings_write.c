/* write_blocks(): a chunk of terms' sorted postings as Whoosh 3 ("W3") posting lists, as
 * segments.w3write.FieldBlocks._chunk does in Python: for each term, its postings in
 * blocks of at most `blocklimit`, each block a length, a pickled info tuple and a pickled
 * (and, past a size, zlib-compressed) data tuple; and each term's info row for the terms
 * table. Whoosh's reader unpickles what is written here into the very tuples the Python
 * path writes; the pickles are only simpler (no memo, no frame), so a few bytes shorter.
 *
 * The arguments are numpy arrays (any object with a contiguous buffer of the right item
 * size), laid out as FieldBlocks keeps them; see w3write.FieldBlocks._chunk_in_c.
 */
#include "speedups.h"

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
pk_values(PsBuf *b, const Chunk *c, Py_ssize_t s, Py_ssize_t e)
{
    const char *src;
    Py_ssize_t n;
    switch (c->mode) {
    case VALUES_NONE:
        return ps_buf_byte(b, 'N');
    case VALUES_FIXED:
        return ps_pk_bytes(b, c->fixed_values + s * c->fixed, (e - s) * c->fixed);
    case VALUES_TUPLE: {
        /* Each value, less the empty ones when there are empty values. */
        Py_ssize_t count = 0;
        for (Py_ssize_t i = s; i < e; i++) {
            if (value_of(c, i, &src, &n) < 0) {
                return -1;
            }
            count += n > 0 || !c->has_empty;
        }
        if (ps_pk_tuple_start(b, count) < 0) {
            return -1;
        }
        for (Py_ssize_t i = s; i < e; i++) {
            if (value_of(c, i, &src, &n) < 0) {
                return -1;
            }
            if (n > 0 || !c->has_empty) {
                if (ps_pk_bytes(b, src, n) < 0) {
                    return -1;
                }
            }
        }
        return ps_pk_tuple_end(b, count);
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
        if (ps_pk_bytes_head(b, total) < 0) {
            return -1;
        }
        for (Py_ssize_t i = s; i < e; i++) {
            value_of(c, i, &src, &n);
            if (ps_buf_put(b, src, n) < 0) {
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
pk_block_max(PsBuf *b, double w, int int_weights)
{
    if (!(w > 0)) {
        return ps_pk_int(b, 0);
    }
    if (int_weights) {
        return ps_pk_int(b, (long long)w);
    }
    return ps_pk_float(b, w);
}

/* Append a block (its signed size, info pickle and data pickle) to `out`. */
static int
put_block(const Chunk *c, PsBuf *out, PsBuf *data, Py_ssize_t count, int64_t lastdoc,
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
    PsBuf info = {0};
    int rc = -1;
    /* (count, lastdoc, block_max, comp, minlen, maxlen), protocol 2 */
    if (ps_buf_put(&info, PROTO, 2) < 0 || ps_buf_byte(&info, '(') < 0 ||
        ps_pk_int(&info, count) < 0 || ps_pk_int(&info, lastdoc) < 0 ||
        pk_block_max(&info, block_max, c->int_weights) < 0 || ps_pk_int(&info, comp) < 0 ||
        ps_pk_int(&info, minlen) < 0 || ps_pk_int(&info, maxlen) < 0 ||
        ps_buf_byte(&info, 't') < 0 || ps_buf_byte(&info, '.') < 0) {
        goto done;
    }
    Py_ssize_t size = info.len + payload_len;
    if (size > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "write_blocks: a block is too large");
        goto done;
    }
    unsigned char head[4];
    ps_be32(head, (uint32_t)(int32_t)(last ? -size : size));
    if (ps_buf_put(out, head, 4) < 0 || ps_buf_put(out, info.data, info.len) < 0 ||
        ps_buf_put(out, payload, payload_len) < 0) {
        goto done;
    }
    *written = 4 + size;
    rc = 0;
done:
    ps_buf_free(&info);
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
    ps_be32(row + 5, (uint32_t)count);
    row[9] = (unsigned char)minlen;
    row[10] = (unsigned char)maxlen;
    if (PyFloat_Pack4(maxweight, (char *)row + 11, 0) < 0) {
        return NULL;
    }
    ps_be32(row + 15, (uint32_t)mindoc);
    ps_be32(row + 19, (uint32_t)maxdoc);
    uint64_t off = (uint64_t)offset;
    for (int i = 0; i < 8; i++) {
        row[23 + i] = (unsigned char)(off >> (8 * (7 - i)));
    }
    ps_be32(row + 31, (uint32_t)(int32_t)length);
    return PyBytes_FromStringAndSize((const char *)row, 35);
}

static double
as_float32(double w)
{
    return (double)(float)w;
}

PyObject *
ps_write_blocks(PyObject *module, PyObject *args, PyObject *kwargs)
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
    PsBuf out = {0}, data = {0};
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
        if (ps_buf_put(&out, magic, magic_len) < 0) {
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
            if (ps_buf_put(&data, PROTO, 2) < 0 || ps_pk_tuple_start(&data, count) < 0 ||
                ps_pk_int(&data, c.docs[s]) < 0) {
                goto done;
            }
            for (Py_ssize_t i = s + 1; i < e; i++) {
                if (ps_pk_int(&data, c.docs[i] - c.docs[i - 1]) < 0) {
                    goto done;
                }
            }
            if (ps_pk_tuple_end(&data, count) < 0) {
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
                if (ps_buf_byte(&data, 'N') < 0) {
                    goto done;
                }
            }
            else if (all_same) {
                if (ps_pk_float(&data, first) < 0) {
                    goto done;
                }
            }
            else {
                if (ps_pk_tuple_start(&data, count) < 0) {
                    goto done;
                }
                for (Py_ssize_t i = s; i < e; i++) {
                    if (ps_pk_float(&data, as_float32(c.weights[i])) < 0) {
                        goto done;
                    }
                }
                if (ps_pk_tuple_end(&data, count) < 0) {
                    goto done;
                }
            }
            if (pk_values(&data, &c, s, e) < 0 || ps_buf_byte(&data, 0x87) < 0 ||
                ps_buf_byte(&data, '.') < 0) {
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
    ps_buf_free(&out);
    ps_buf_free(&data);
    Py_XDECREF(infos);
    return result;
}
