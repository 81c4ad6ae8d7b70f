/* pubsearch.core._speedups: the hot loops of indexing (segments/, analysis.py) and of searching
 * (masks.py, topdocs.py, semantic.py), in C.
 *
 * Each function does what a piece of Python does, checked by tests/test_speedups.py;
 * without this module (no C compiler) that Python runs instead. See speedups.py. The
 * functions live in the files speedups.h lists; this one holds the module's method table
 * and its init.
 */
#include "speedups.h"

static PyMethodDef methods[] = {
    {"decode_list", ps_decode_list, METH_VARARGS,
     "decode_list(raw, magic, decompress, with_values=0)\n"
     "    -> (ids, weights[, values | joined, ends]), int64 and float64 bytes[, a list of\n"
     "    bytes (with_values 1) | the values joined and where each ends (with_values 2)]\n\n"
     "A W3 posting list's document numbers, weights and values; see w3format.raw_list."},
    {"decode_lists", ps_decode_lists, METH_VARARGS,
     "decode_lists(joined, starts, lengths, magic, decompress) -> (ids, weights, counts)\n\n"
     "Many W3 posting lists in one call; see w3format.prefix_postings."},
    {"scan_terms", ps_scan_terms, METH_VARARGS,
     "scan_terms(table, pos, start, field_size, stats_size)\n"
     "    -> (pos, done, words, frequencies, offsets, lengths)\n\n"
     "A W3 terms table's words from a prefix on, with their rows' figures; see\n"
     "w3format.prefix_postings."},
    {"table_get_many", ps_table_get_many, METH_VARARGS,
     "table_get_many(fd, base, tables, keys, hashes) -> [bytes | None, ...]\n\n"
     "Many keys' values in a W3 terms table; see w3format._TermsTable.get_many."},
    {"common_indices", ps_common_indices, METH_VARARGS,
     "common_indices(a, b) -> (in_a, in_b), int64 bytes each\n\n"
     "Where two rising int64 arrays have the same numbers; see masks._common_indices."},
    {"int8_similarities", ps_int8_similarities, METH_VARARGS,
     "int8_similarities(codes, scales, query, unit, out) -> None\n\n"
     "Every row's similarity to an int16 query, from int8 codes; see\n"
     "semantic.SemanticIndex.similarities."},
    {"add_scores", ps_add_scores, METH_VARARGS,
     "add_scores(total, seen, offset, ids, tfs, norms, idf, k1, boost) -> None\n\n"
     "A piece of a word's postings added to a query's scores; see topdocs._add_term."},
    {"add_word_scores", ps_add_word_scores, METH_VARARGS,
     "add_word_scores(total, seen, ids, tfs, word_of, idfs, norms, k1, boost) -> None\n\n"
     "A prefix's postings added to its scores; see topdocs._pattern_scores."},
    {"phrase_fits", ps_phrase_fits, METH_VARARGS,
     "phrase_fits([(joined, starts, ends), ...], slop) -> bytes, one per candidate\n\n"
     "Which candidates hold a phrase, from its words' encoded positions; see\n"
     "w3format.phrase_fits."},
    {"position_table", ps_position_table, METH_VARARGS,
     "position_table(values) -> (owners, positions), int64 bytes each\n\n"
     "Every position of Whoosh's encoded position lists; see masks._position_table."},
    {"write_blocks", (PyCFunction)(void (*)(void))ps_write_blocks, METH_VARARGS | METH_KEYWORDS,
     "write_blocks(bounds, docs, weights, lengths, values, starts, ends, fixed_values, fixed,\n"
     "             mode, has_empty, int_weights, blocklimit, compression, min_compressed,\n"
     "             magic, pos, compress) -> (postings bytes, [term info rows])\n\n"
     "A chunk of terms' posting lists in Whoosh 3's format; see segments.w3write.FieldBlocks._chunk_in_c."},
    {"run_stems", ps_run_stems, METH_VARARGS,
     "run_stems(text, cache, leads, edge, lead_of) -> (stems, first position)\n\n"
     "A text's stems from its white-space separated runs; see analysis._index_words."},
    {"run_ids", ps_run_ids, METH_VARARGS,
     "run_ids(text, cache, leads, edge, lead_of) -> (numbers, first position)\n\n"
     "run_stems, with the cache giving a run's words' numbers (uint32 bytes), joined."},
    {"doc_postings", (PyCFunction)(void (*)(void))ps_doc_postings, METH_VARARGS | METH_KEYWORDS,
     "doc_postings(numbers, stem_lists, first, positions, boost, fieldboost)\n"
     "    -> (base, new_terms, termnums, weights, sizes, values, postings, length, last_value)\n\n"
     "One document's postings in one text field; see segments.pool.FieldPostings.add_encoded."},
    {"doc_postings_ids", (PyCFunction)(void (*)(void))ps_doc_postings_ids,
     METH_VARARGS | METH_KEYWORDS,
     "doc_postings_ids(numbers, fieldmap, stems, ids, first, positions, boost, fieldboost)\n"
     "    -> what doc_postings gives\n\n"
     "doc_postings of a text given as its words' numbers in a vocabulary."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pubsearch.core._speedups",
    "The hot loops of indexing, in C (see pubsearch.speedups).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
