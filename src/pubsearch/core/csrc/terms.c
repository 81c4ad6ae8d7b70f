/* A W3 terms table (an OrderedHashReader's items and hash tables): scan_terms() reads the
 * items from a prefix on, table_get_many() looks many keys up in its hash tables, reading
 * the file with the GIL released.
 */
#include "speedups.h"

#include <unistd.h>

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
PyObject *
ps_scan_terms(PyObject *module, PyObject *args)
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
    PsBuf dfs = {0}, offsets = {0}, lengths = {0};
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
        if (ps_buf_put(&dfs, &df, 8) < 0 || ps_buf_put(&offsets, &offset, 8) < 0 ||
            ps_buf_put(&lengths, &length, 8) < 0) {
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
    ps_buf_free(&dfs);
    ps_buf_free(&offsets);
    ps_buf_free(&lengths);
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
PyObject *
ps_table_get_many(PyObject *module, PyObject *args)
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
