/* Phrase matching (masks._phrase_docs): the documents two posting lists have in common
 * (common_indices), and the positions of the words in them, all of them
 * (position_table) or only whether they stand as the phrase does (phrase_fits).
 */
#include "speedups.h"

/* -- position lists --------------------------------------------------------------------- */

/* The positions of one of Whoosh's encoded position lists (formats.Positions: a 4-byte
 * count, then a protocol-2 pickle of the list of position deltas, its STOP often cut off)
 * appended to `out` as int64 (the deltas summed). 0 when read, -1 for anything else (no
 * exception set), -2 when out of memory. */
static int
decode_positions(const unsigned char *p, Py_ssize_t n, PsBuf *out)
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
        if (ps_buf_put(out, &position, 8) < 0) {
            return -2;
        }
    }
    return 0;
}

/* Every position of every value of `values` (a list of bytes: Whoosh's encoded position
 * lists, see decode_positions) as two int64 buffers: the index of the value each position
 * came from, and the position. Raises ValueError for anything else; the caller then
 * decodes with pickle. */
PyObject *
ps_position_table(PyObject *module, PyObject *args)
{
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) {
        return NULL;
    }
    PsBuf owners = {0}, positions = {0};
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
            if (ps_buf_put(&owners, &owner, 8) < 0) {
                goto fail;
            }
        }
    }
    PyObject *result = Py_BuildValue(
        "(y#y#)", owners.data ? owners.data : "", owners.len,
        positions.data ? positions.data : "", positions.len);
    ps_buf_free(&owners);
    ps_buf_free(&positions);
    return result;
unexpected:
    PyErr_SetString(PyExc_ValueError, "unexpected encoding of positions");
fail:
    ps_buf_free(&owners);
    ps_buf_free(&positions);
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
PyObject *
ps_phrase_fits(PyObject *module, PyObject *args)
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
    PsBuf reached = {0}, next = {0};
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
            PsBuf swap = reached;
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
    ps_buf_free(&reached);
    ps_buf_free(&next);
    return result;
}

/* -- documents in common --------------------------------------------------------------- */

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
PyObject *
ps_common_indices(PyObject *module, PyObject *args)
{
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b)) {
        return NULL;
    }
    PyObject *result = NULL;
    PsBuf ia = {0}, ib = {0};
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
            if (ps_buf_put(&ia, &pi, 8) < 0 || ps_buf_put(&ib, &pj, 8) < 0) {
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
    ps_buf_free(&ia);
    ps_buf_free(&ib);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}
