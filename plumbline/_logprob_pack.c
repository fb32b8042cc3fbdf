/* The v3 top-k columns in one pass: logprob_v3._top_columns_reference's numpy, in C.
 *
 * top_columns(ids, lps, alt_ids, alt_lps, k, step) takes C-contiguous buffers (int64 ids and
 * float64 logprobs per position; int64 and float64 alternatives, k per position) and returns
 * (place, stored_ids, zigzag): per position the place of the alternative that is the sampled
 * token with the same logprob (255 where none), then the other alternatives' ids and their
 * zigzag-coded step deltas along each position's list, as int64 bytearrays. The arithmetic is
 * numpy's: rint(value / -step) (round half to even), int64 wrapping.
 */
#include "_logprob_scan.h"

#include <math.h>
#include <string.h>

#define NONE 255

static int contiguous(PyObject *object, Py_buffer *view, Py_ssize_t count, Py_ssize_t width) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS) < 0) return 0;
    if (view->len != count * width) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "top_columns: an array has the wrong size");
        return 0;
    }
    return 1;
}

PyObject *top_columns(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *ids_in, *lps_in, *alt_ids_in, *alt_lps_in;
    Py_ssize_t k;
    double step;
    if (!PyArg_ParseTuple(args, "OOOOnd", &ids_in, &lps_in, &alt_ids_in, &alt_lps_in, &k, &step))
        return NULL;
    if (k < 1 || k >= NONE || !(step > 0))
        return PyErr_Format(PyExc_ValueError, "top_columns needs 1 <= k < %d and step > 0", NONE);
    Py_buffer ids = {0}, lps = {0}, alt_ids = {0}, alt_lps = {0};
    PyObject *result = NULL, *place = NULL, *stored = NULL, *zigzag = NULL;
    if (PyObject_GetBuffer(ids_in, &ids, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t n = ids.len / (Py_ssize_t)sizeof(int64_t);
    if (ids.len != n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "top_columns: ids are not int64");
        goto release;
    }
    if (n > PY_SSIZE_T_MAX / k / (Py_ssize_t)sizeof(int64_t)) {
        PyErr_NoMemory();
        goto release;
    }
    if (!contiguous(lps_in, &lps, n, sizeof(double))) goto release;
    if (!contiguous(alt_ids_in, &alt_ids, n * k, sizeof(int64_t))) goto release;
    if (!contiguous(alt_lps_in, &alt_lps, n * k, sizeof(double))) goto release;
    const int64_t *id = ids.buf, *alt_id = alt_ids.buf;
    const double *lp = lps.buf, *alt_lp = alt_lps.buf;
    place = PyByteArray_FromStringAndSize(NULL, n);
    stored = PyByteArray_FromStringAndSize(NULL, n * k * (Py_ssize_t)sizeof(int64_t));
    zigzag = PyByteArray_FromStringAndSize(NULL, n * k * (Py_ssize_t)sizeof(int64_t));
    if (!place || !stored || !zigzag) goto release;
    unsigned char *places = (unsigned char *)PyByteArray_AS_STRING(place);
    int64_t *ids_out = (int64_t *)PyByteArray_AS_STRING(stored);
    uint64_t *codes = (uint64_t *)PyByteArray_AS_STRING(zigzag);
    Py_ssize_t kept = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        const int64_t *row_ids = alt_id + r * k;
        const double *row_lps = alt_lp + r * k;
        Py_ssize_t at = NONE;
        for (Py_ssize_t j = 0; j < k; j++)
            if (row_ids[j] == id[r] && row_lps[j] == lp[r]) { at = j; break; }
        places[r] = (unsigned char)at;
        int64_t previous = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            /* The sampled alternative takes its neighbour's step: the next delta skips it. */
            int64_t steps = (int64_t)nearbyint(row_lps[j] / -step);
            if (j == at) continue;
            uint64_t delta = (uint64_t)steps - (uint64_t)previous;
            previous = steps;
            codes[kept] = (delta << 1) ^ (uint64_t)(-(int64_t)(delta >> 63));
            ids_out[kept++] = row_ids[j];
        }
    }
    if (PyByteArray_Resize(stored, kept * (Py_ssize_t)sizeof(int64_t)) < 0) goto release;
    if (PyByteArray_Resize(zigzag, kept * (Py_ssize_t)sizeof(int64_t)) < 0) goto release;
    result = Py_BuildValue("(OOO)", place, stored, zigzag);
release:
    Py_XDECREF(place);
    Py_XDECREF(stored);
    Py_XDECREF(zigzag);
    if (ids.obj) PyBuffer_Release(&ids);
    if (lps.obj) PyBuffer_Release(&lps);
    if (alt_ids.obj) PyBuffer_Release(&alt_ids);
    if (alt_lps.obj) PyBuffer_Release(&alt_lps);
    return result;
}
