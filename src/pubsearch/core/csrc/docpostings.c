/* doc_postings() and doc_postings_ids(): one document's postings in one text field, each
 * term's weight and its value (its positions, or its frequency), for
 * segments.pool.FieldPostings (segments/docpostings.py is the Python of the same).
 */
#include "speedups.h"

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
put_positions(PsBuf *b, const Word *words, Py_ssize_t count, long long first)
{
    unsigned char head[4];
    ps_be32(head, (uint32_t)count);
    static const char list_head[5] = {(char)0x80, 2, ']', 'q', 0}; /* PROTO 2, EMPTY_LIST, BINPUT 0 */
    if (ps_buf_put(b, head, 4) < 0 || ps_buf_put(b, list_head, 5) < 0) {
        return -1;
    }
    if (count > 1 && ps_buf_byte(b, '(') < 0) { /* MARK */
        return -1;
    }
    long long base = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long long position = first + WORD_INDEX(words[i]);
        if (ps_pk_int(b, position - base) < 0) {
            return -1;
        }
        base = position;
    }
    /* APPENDS or APPEND, then STOP */
    return ps_buf_byte(b, count > 1 ? 'e' : 'a') < 0 ? -1 : ps_buf_byte(b, '.');
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
    PsBuf termnums = {0}, weights = {0}, sizes = {0}, values = {0};
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
            ps_be32(packed, (uint32_t)freq);
            if (ps_buf_put(&values, packed, 4) < 0) {
                goto done;
            }
        }
        uint32_t size = (uint32_t)(values.len - last_start);
        if (ps_buf_put(&termnums, &termnum, 4) < 0 || ps_buf_put(&weights, &weight, 8) < 0 ||
            ps_buf_put(&sizes, &size, 4) < 0) {
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
    ps_buf_free(&termnums);
    ps_buf_free(&weights);
    ps_buf_free(&sizes);
    ps_buf_free(&values);
    return result;
}

PyObject *
ps_doc_postings(PyObject *module, PyObject *args, PyObject *kwargs)
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
PyObject *
ps_doc_postings_ids(PyObject *module, PyObject *args, PyObject *kwargs)
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
