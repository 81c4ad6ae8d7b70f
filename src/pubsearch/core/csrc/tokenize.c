/* run_stems() and run_ids(): a text's stems (or their numbers in a vocabulary), run by run
 * of the characters a word can hold, each run looked up in analysis.py's cache; and the
 * first word's position. See analysis._index_words.
 */
#include "speedups.h"

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
    PsBuf numbers = {0};
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
            ok = ps_buf_put(&numbers, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)) == 0;
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
        ps_buf_free(&numbers);
        return result;
    }
    return Py_BuildValue("(NL)", found, first);
fail:
    Py_XDECREF(found);
    ps_buf_free(&numbers);
    return NULL;
}

PyObject *
ps_run_stems(PyObject *module, PyObject *args)
{
    return runs(args, 0);
}

PyObject *
ps_run_ids(PyObject *module, PyObject *args)
{
    return runs(args, 1);
}
