/* decode_list() and decode_lists(): W3 posting lists read back, their document numbers,
 * weights and (for decode_list) values, block by block (masks._raw_list,
 * w3format.prefix_postings). A list this code does not read raises ValueError, and the
 * caller unpickles it in Python.
 */
#include "speedups.h"

/* Every block of one W3 posting list (the `n` bytes at `p`: the postings file from the
 * list's magic on): its document numbers (each block's deltas summed) and weights appended
 * to `ids` and `weights` as int64 and float64, and with `values` (a list), its values as
 * bytes. `numbers` is scratch space. `decompress` is zlib.decompress, for blocks stored
 * compressed. 0 when read; -1 for an encoding this code does not read (no exception
 * set); -2 with an exception set. */
static int
decode_blocks(const unsigned char *p, Py_ssize_t n, const char *magic, Py_ssize_t magic_len,
              PyObject *decompress, PsBuf *ids, PsBuf *weights, PsBuf *numbers, PyObject *values,
              PsBuf *joined, PsBuf *ends)
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
        PsPkReader info = {p + at, 0, length};
        Py_ssize_t fields;
        numbers->len = 0;
        ps_pkr_header(&info);
        int got = ps_pkr_numbers(&info, numbers, &fields);
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
        PsPkReader data = {info.p + info.at, 0, info.n - info.at};
        if (compressed) {
            inflated = PyObject_CallFunction(
                decompress, "y#", (const char *)data.p, data.n);
            if (inflated == NULL) {
                goto fail;
            }
            data.p = (const unsigned char *)PyBytes_AS_STRING(inflated);
            data.n = PyBytes_GET_SIZE(inflated);
        }
        ps_pkr_header(&data);
        numbers->len = 0;
        Py_ssize_t found;
        got = ps_pkr_numbers(&data, numbers, &found);
        if (got == -2) {
            goto fail;
        }
        if (got != 0 || found != count) {
            goto unexpected;
        }
        if (ps_buf_reserve(ids, count * 8) < 0 || ps_buf_reserve(weights, count * 8) < 0) {
            goto fail;
        }
        int64_t doc = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            doc += (int64_t)((double *)numbers->data)[i];
            ps_buf_put(ids, &doc, 8); /* reserved above */
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
            if (ps_buf_put(numbers, &one, 8) < 0) {
                goto fail;
            }
        } else {
            got = ps_pkr_numbers(&data, numbers, &found);
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
            ps_buf_put(weights, weight, 8); /* reserved above */
        }
        if (values != NULL || joined != NULL) {
            got = ps_pkr_values(&data, values, joined, ends, count);
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
PyObject *
ps_decode_list(PyObject *module, PyObject *args)
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
    PsBuf ids = {0}, weights = {0}, numbers = {0}, joined = {0}, ends = {0};
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
    ps_buf_free(&ids);
    ps_buf_free(&weights);
    ps_buf_free(&numbers);
    ps_buf_free(&joined);
    ps_buf_free(&ends);
    PyBuffer_Release(&raw);
    return result;
}

/* Many W3 posting lists lying in `joined` (list i: the `lengths[i]` bytes from
 * `starts[i]`, int64 each): all their document numbers and weights, one list after
 * another (int64 and float64 bytes), and each list's number of postings (int64 bytes).
 * ValueError for a list this code does not read: the caller reads them otherwise. */
PyObject *
ps_decode_lists(PyObject *module, PyObject *args)
{
    Py_buffer joined, starts, lengths;
    const char *magic;
    Py_ssize_t magic_len;
    PyObject *decompress;
    if (!PyArg_ParseTuple(args, "y*y*y*y#O", &joined, &starts, &lengths, &magic, &magic_len,
                          &decompress)) {
        return NULL;
    }
    PsBuf ids = {0}, weights = {0}, numbers = {0}, counts = {0};
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
        if (got == 0 && ps_buf_put(&counts, &count, 8) < 0) {
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
    ps_buf_free(&ids);
    ps_buf_free(&weights);
    ps_buf_free(&numbers);
    ps_buf_free(&counts);
    PyBuffer_Release(&joined);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&lengths);
    return result;
}
