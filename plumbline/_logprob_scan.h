/* What the parts of plumbline._logprob_scan share: the columns a scan reads, the key table
 * that turns their keys into vocabulary ids (_logprob_keys.c), the v3 top-k columns
 * (_logprob_pack.c). */
#ifndef PLUMBLINE_LOGPROB_SCAN_H
#define PLUMBLINE_LOGPROB_SCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef const unsigned char *Ptr;

/* One entry's key as two spans into the input: its token's JSON content, its `bytes` JSON. */
typedef struct {
    Ptr token;
    Py_ssize_t token_len;
    Ptr raw;
    Py_ssize_t raw_len;
} Span;

typedef struct {
    Span *spans;
    double *values;
    Py_ssize_t len, cap;
} Entries;

typedef struct {
    int64_t *values;
    Py_ssize_t len, cap;
} Counts;

/* A choice's items read into columns: sampled entries, alternatives, alternatives per position. */
typedef struct {
    PyObject *held;  /* the items as a tuple of bytes of our own: the spans point into them */
    Entries sampled, alts;
    Counts counts;
} Columns;

/* Reads `items` (a list or tuple of bytes): 1 read, 0 not vLLM's layout (or no entry), -1 a
 * Python error. columns_free releases what it holds in every case. */
int columns_read(PyObject *items, Columns *into);
void columns_free(Columns *columns);
int same_key(const Span *a, const Span *b);
PyObject *bytes_of_key(const Span *s);
PyObject *numbers_of(const void *values, Py_ssize_t count, Py_ssize_t width);

extern PyTypeObject KeyTableType;
PyObject *scan_ids(PyObject *module, PyObject *args);
PyObject *top_columns(PyObject *module, PyObject *args);

#endif
