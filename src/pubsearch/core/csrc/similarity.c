/* int8_similarities(): every row's similarity to a query, from the int8 codes of the
 * semantic index (semantic.SemanticIndex.similarities).
 */
#include "speedups.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

PyObject *
ps_int8_similarities(PyObject *module, PyObject *args)
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
