/* The private header of pubsearch.core._speedups: what its C files share.
 *
 * One extension, built from every .c file beside this one (pyproject.toml lists them):
 *
 *   module.c          the method table and the module's init
 *   pickle.c          the pickle opcodes of Whoosh 3's blocks, written and read
 *   postings_write.c  write_blocks: a chunk of terms' posting lists, in W3 blocks
 *   postings_read.c   decode_list, decode_lists: W3 posting lists read back
 *   docpostings.c     doc_postings, doc_postings_ids: one document's postings in a field
 *   tokenize.c        run_stems, run_ids: a text's stems (or their numbers), run by run
 *   terms.c           scan_terms, table_get_many: a W3 terms table scanned and probed
 *   phrases.c         common_indices, position_table, phrase_fits: phrase matching
 *   scores.c          add_scores, add_word_scores: BM25 scores summed
 *   similarity.c      int8_similarities: int8 vectors' similarities to a query
 *
 * Everything a file shares with another starts with ps_ (PsBuf, PsPkReader for types) and
 * is declared here; the rest stays static in its file. The byte buffer's few functions are
 * static inline here, as the hot loops of several files call them for each posting.
 */
#ifndef PUBSEARCH_SPEEDUPS_H
#define PUBSEARCH_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Nothing declared here is exported from the shared library: only PyInit__speedups is. */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* -- a growing byte buffer ------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} PsBuf;

static inline int
ps_buf_reserve(PsBuf *b, Py_ssize_t extra)
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

static inline int
ps_buf_put(PsBuf *b, const void *src, Py_ssize_t n)
{
    if (ps_buf_reserve(b, n) < 0) {
        return -1;
    }
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline int
ps_buf_byte(PsBuf *b, unsigned char c)
{
    return ps_buf_put(b, &c, 1);
}

static inline void
ps_buf_free(PsBuf *b)
{
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* v as 4 big-endian bytes at p. */
static inline void
ps_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* -- pickles written (pickle.c) --------------------------------------------------------- */

int ps_pk_int(PsBuf *b, long long v);
int ps_pk_float(PsBuf *b, double v);
int ps_pk_bytes_head(PsBuf *b, Py_ssize_t n);
int ps_pk_bytes(PsBuf *b, const char *src, Py_ssize_t n);
int ps_pk_tuple_start(PsBuf *b, Py_ssize_t n);
int ps_pk_tuple_end(PsBuf *b, Py_ssize_t n);

/* -- pickles read (pickle.c) ------------------------------------------------------------ */

/* A reader of the few pickles a W3 block holds: tuples of numbers, None, and the rest
 * skipped. Any other opcode makes it fail, and the caller unpickles in Python. */
typedef struct {
    const unsigned char *p;
    Py_ssize_t at;
    Py_ssize_t n;
} PsPkReader;

int ps_pkr_header(PsPkReader *r);
int ps_pkr_numbers(PsPkReader *r, PsBuf *out, Py_ssize_t *count);
int ps_pkr_values(PsPkReader *r, PyObject *out, PsBuf *joined, PsBuf *ends, Py_ssize_t count);

/* -- the module's functions, each in the file named (module.c's table lists them) ------- */

/* postings_write.c */
PyObject *ps_write_blocks(PyObject *module, PyObject *args, PyObject *kwargs);
/* postings_read.c */
PyObject *ps_decode_list(PyObject *module, PyObject *args);
PyObject *ps_decode_lists(PyObject *module, PyObject *args);
/* docpostings.c */
PyObject *ps_doc_postings(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *ps_doc_postings_ids(PyObject *module, PyObject *args, PyObject *kwargs);
/* tokenize.c */
PyObject *ps_run_stems(PyObject *module, PyObject *args);
PyObject *ps_run_ids(PyObject *module, PyObject *args);
/* terms.c */
PyObject *ps_scan_terms(PyObject *module, PyObject *args);
PyObject *ps_table_get_many(PyObject *module, PyObject *args);
/* phrases.c */
PyObject *ps_common_indices(PyObject *module, PyObject *args);
PyObject *ps_position_table(PyObject *module, PyObject *args);
PyObject *ps_phrase_fits(PyObject *module, PyObject *args);
/* scores.c */
PyObject *ps_add_scores(PyObject *module, PyObject *args);
PyObject *ps_add_word_scores(PyObject *module, PyObject *args);
/* similarity.c */
PyObject *ps_int8_similarities(PyObject *module, PyObject *args);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* PUBSEARCH_SPEEDUPS_H */
