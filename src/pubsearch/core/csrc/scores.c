/* BM25 scores summed for ranking, as numpy sums them (topdocs._add_term and
 * topdocs._pattern_scores): add_scores() and add_word_scores().
 */
#include "speedups.h"

/* Add one piece of a word's posting list to a query's scores: for each posting i, the
 * document d = offset + ids[i] gains the word's score there, Whoosh's BM25
 * idf * ((tf * (k1 + 1)) / (tf + norms[d])) (norms: each document's K1 * ((1 - B) + B *
 * length / average), or tf itself when norms is None), times boost unless boost is 1; and
 * seen[d] is set to 1 (flags, 1 byte each) or raised by 1 (counts, 2 bytes each). The
 * operations are numpy's, in its order, on doubles (built without contracting a product
 * and a sum into one rounding: -ffp-contract=off), so the sums are the same. */
PyObject *
ps_add_scores(PyObject *module, PyObject *args)
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

/* The postings of a prefix's words (masks.pattern_postings), scored as topdocs._pattern_scores
 * scores them: posting i, of word word_of[i], adds idfs[word_of[i]] * ((tf * (k1 + 1)) /
 * (tf + norms[d])) (times boost unless it is 1) to total[d], d = ids[i], in the order of
 * the postings (numpy's bincount's), and sets seen[d]. */
PyObject *
ps_add_word_scores(PyObject *module, PyObject *args)
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
