/* Compiled reader of vLLM's chat logprob layout: the same columns as logprob_scan's reference.
 *
 * scan(items) takes a list or tuple of bytes (a choice's per-chunk `logprobs.content` items) and
 * returns (keys, logprobs, alt_counts, alt_keys, alt_logprobs), the numbers as bytearrays of
 * float64 / int64, or None where any item is not exactly vLLM's layout. Every read is bounds
 * checked, nothing recurses, and scratch memory grows with the input only (each entry takes at
 * least 37 input bytes). The grammar is the reference's, byte for byte.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef const unsigned char *Ptr;

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

/* Grows to hold one more; 0 where memory ran out (the Python error is set). */
static int entries_reserve(Entries *e) {
    if (e->len < e->cap) return 1;
    Py_ssize_t cap = e->cap ? e->cap * 2 : 256;
    if (cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Span)) { PyErr_NoMemory(); return 0; }
    Span *spans = PyMem_Realloc(e->spans, (size_t)cap * sizeof(Span));
    if (!spans) { PyErr_NoMemory(); return 0; }
    e->spans = spans;
    double *values = PyMem_Realloc(e->values, (size_t)cap * sizeof(double));
    if (!values) { PyErr_NoMemory(); return 0; }
    e->values = values;
    e->cap = cap;
    return 1;
}

static int counts_push(Counts *c, int64_t value) {
    if (c->len == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 256;
        if (cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)) { PyErr_NoMemory(); return 0; }
        int64_t *values = PyMem_Realloc(c->values, (size_t)cap * sizeof(int64_t));
        if (!values) { PyErr_NoMemory(); return 0; }
        c->values = values;
        c->cap = cap;
    }
    c->values[c->len++] = value;
    return 1;
}

/* The literal at *at, consumed; 0 where the bytes differ or run out. */
static int literal(Ptr *at, Ptr end, const char *text, Py_ssize_t len) {
    if (end - *at < len || memcmp(*at, text, (size_t)len) != 0) return 0;
    *at += len;
    return 1;
}
#define LITERAL(at, end, text) literal(at, end, text, (Py_ssize_t)(sizeof(text) - 1))

static int hex4(Ptr p, Ptr end) {
    if (end - p < 4) return -1;
    int value = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char ch = p[i];
        int digit;
        if (ch >= '0' && ch <= '9') digit = ch - '0';
        else if (ch >= 'a' && ch <= 'f') digit = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F') digit = ch - 'A' + 10;
        else return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* p just after a backslash: past the escape, or NULL. Surrogates only as a high-low pair, as
 * orjson (and so decode_key) accepts them. */
static Ptr escape(Ptr p, Ptr end) {
    if (p >= end) return NULL;
    switch (*p) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return p + 1;
    case 'u':
        break;
    default:
        return NULL;
    }
    int unit = hex4(p + 1, end);
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return NULL;
    p += 5;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return NULL;
        int low = hex4(p + 2, end);
        if (low < 0xDC00 || low > 0xDFFF) return NULL;
        p += 6;
    }
    return p;
}

/* p at a byte >= 0x80: past one well-formed UTF-8 character (no overlongs, surrogates or
 * values past U+10FFFF), or NULL. */
static Ptr utf8_char(Ptr p, Ptr end) {
    unsigned char lead = p[0], low = 0x80, high = 0xBF;
    Py_ssize_t len;
    if (lead >= 0xC2 && lead <= 0xDF) len = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        len = 3;
        if (lead == 0xE0) low = 0xA0;
        else if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        len = 4;
        if (lead == 0xF0) low = 0x90;
        else if (lead == 0xF4) high = 0x8F;
    } else return NULL;
    if (end - p < len || p[1] < low || p[1] > high) return NULL;
    for (Py_ssize_t i = 2; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return NULL;
    return p + len;
}

/* *at just after an opening quote: moved to the closing quote (left for the next literal). */
static int string_content(Ptr *at, Ptr end) {
    Ptr p = *at;
    while (p < end) {
        unsigned char ch = *p;
        if (ch == '"') { *at = p; return 1; }
        if (ch < 0x20) return 0;
        if (ch == '\\') p = escape(p + 1, end);
        else if (ch < 0x80) p++;
        else p = utf8_char(p, end);
        if (!p) return 0;
    }
    return 0;
}

/* A JSON number's grammar; its significant digits (up to 19) and decimal exponent for the fast
 * conversion, or *fast = 0 where only the exact span's full conversion will do. */
typedef struct {
    Ptr start, stop;
    uint64_t mantissa;
    int64_t exponent;
    int negative, fast, significant;
} Number;

static int digits(Ptr *at, Ptr end, Number *n, int fraction) {
    Ptr p = *at;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (n->mantissa == 0 && *p == '0') { /* a leading zero: not significant */ }
        else if (n->significant < 19) {  /* 19 digits always fit in 64 bits */
            n->mantissa = n->mantissa * 10 + (uint64_t)(*p - '0');
            n->significant++;
        } else n->fast = 0;
        if (fraction) n->exponent--;
    }
    int any = p != *at;
    *at = p;
    return any;
}

static int number(Ptr *at, Ptr end, Number *n) {
    Ptr p = *at;
    n->start = p;
    n->mantissa = 0;
    n->exponent = 0;
    n->fast = 1;
    n->significant = 0;
    n->negative = p < end && *p == '-';
    if (n->negative) p++;
    if (p >= end) return 0;
    if (*p == '0') p++;
    else if (*p < '1' || *p > '9' || !digits(&p, end, n, 0)) return 0;
    if (p < end && *p == '.') {
        p++;
        if (!digits(&p, end, n, 1)) return 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int negative = p < end && (*p == '-' || *p == '+') ? *p++ == '-' : 0;
        Ptr first = p;
        int64_t value = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (value < 100000) value = value * 10 + (*p - '0');  /* far past any double */
        if (p == first) return 0;
        n->exponent += negative ? -value : value;
    }
    n->stop = p;
    *at = p;
    return 1;
}

#if LDBL_MANT_DIG >= 64
/* 10^k for k <= 27 is exact in a 64-bit significand (5^27 < 2^64). */
static const long double POWERS[28] = {
    1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L,
    1e27L};

/* mantissa * 10^exponent rounded once to long double (both operands exact, one IEEE operation),
 * then to double. The second rounding agrees with rounding the exact value unless the first
 * landed exactly on a midpoint between two doubles: that case (and any other) goes to dtoa. */
static int fast_double(const Number *n, double *out) {
    if (!n->fast) return 0;
    if (n->mantissa == 0) { *out = n->negative ? -0.0 : 0.0; return 1; }
    if (n->exponent < -27 || n->exponent > 27) return 0;
    long double exact = (long double)n->mantissa;
    exact = n->exponent < 0 ? exact / POWERS[-n->exponent] : exact * POWERS[n->exponent];
    double rounded = (double)exact;
    if ((long double)rounded != exact) {
        double other = nextafter(rounded, exact > rounded ? INFINITY : -INFINITY);
        if ((long double)rounded + (long double)other == 2.0L * exact) return 0;
    }
    *out = n->negative ? -rounded : rounded;
    return 1;
}

/* The arithmetic really is 64-bit (an x87 control word set to double would break the above). */
static int extended_precision(void) {
    volatile long double one = 1.0L, tiny = 0x1p-63L;
    return one + tiny != one;
}
#else
static int fast_double(const Number *n, double *out) { (void)n; (void)out; return 0; }
static int extended_precision(void) { return 0; }
#endif

/* The number's value as float() gives it: 1 done, 0 not finite, -1 a Python error. The span is
 * followed by a ',' (checked by the caller), where the full conversion stops. */
static int convert(const Number *n, int fast, double *out) {
    if (fast && fast_double(n, out)) return 1;
    char *stop = NULL;
    double value = PyOS_string_to_double((const char *)n->start, &stop, NULL);
    if (value == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
        PyErr_Clear();  /* beyond what dtoa reads (a billion digits): as float() refuses it */
        return 0;
    }
    if ((Ptr)stop != n->stop || !isfinite(value)) return 0;
    *out = value;
    return 1;
}

/* A `bytes` value: null, or a list of integers 0..255 written without leading zeros. */
static int bytes_value(Ptr *at, Ptr end) {
    if (LITERAL(at, end, "null")) return 1;
    if (!LITERAL(at, end, "[")) return 0;
    if (LITERAL(at, end, "]")) return 1;
    Ptr p = *at;
    for (;;) {
        if (p >= end || *p < '0' || *p > '9') return 0;
        int value = *p++ - '0';
        if (value != 0)
            for (int i = 0; i < 2 && p < end && *p >= '0' && *p <= '9'; i++)
                value = value * 10 + (*p++ - '0');
        if (value > 255 || (p < end && *p >= '0' && *p <= '9')) return 0;
        if (p < end && *p == ',') { p++; continue; }
        if (p < end && *p == ']') { *at = p + 1; return 1; }
        return 0;
    }
}

/* `{"token":"..","logprob":N,"bytes":B`: 1 read, 0 not the layout, -1 a Python error. */
static int fields(Ptr *at, Ptr end, Entries *into, int fast) {
    Span span;
    Number n;
    double value;
    if (!LITERAL(at, end, "{\"token\":\"")) return 0;
    span.token = *at;
    if (!string_content(at, end)) return 0;
    span.token_len = *at - span.token;
    if (!LITERAL(at, end, "\",\"logprob\":") || !number(at, end, &n)) return 0;
    if (!LITERAL(at, end, ",\"bytes\":")) return 0;
    span.raw = *at;
    if (!bytes_value(at, end)) return 0;
    span.raw_len = *at - span.raw;
    int converted = convert(&n, fast, &value);
    if (converted <= 0) return converted;
    if (!entries_reserve(into)) return -1;
    into->spans[into->len] = span;
    into->values[into->len++] = value;
    return 1;
}

/* One item: entries separated by commas, to its last byte. */
static int item(Ptr at, Ptr end, Entries *sampled, Entries *alts, Counts *counts, int fast) {
    for (int first = 1; at < end; first = 0) {
        if (!first && !LITERAL(&at, end, ",")) return 0;
        int read = fields(&at, end, sampled, fast);
        if (read <= 0) return read;
        if (!LITERAL(&at, end, ",\"top_logprobs\":[")) return 0;
        int64_t count = 0;
        if (!LITERAL(&at, end, "]")) {
            for (;;) {
                read = fields(&at, end, alts, fast);
                if (read <= 0) return read;
                if (!LITERAL(&at, end, "}")) return 0;
                count++;
                if (!LITERAL(&at, end, ",")) break;
            }
            if (!LITERAL(&at, end, "]")) return 0;
        }
        if (!LITERAL(&at, end, "}")) return 0;
        if (!counts_push(counts, count)) return -1;
    }
    return 1;
}

static PyObject *key(const Span *s) {
    PyObject *made = PyBytes_FromStringAndSize(NULL, s->token_len + 1 + s->raw_len);
    if (!made) return NULL;
    char *into = PyBytes_AS_STRING(made);
    memcpy(into, s->token, (size_t)s->token_len);
    into[s->token_len] = '\0';
    memcpy(into + s->token_len + 1, s->raw, (size_t)s->raw_len);
    return made;
}

static int same_key(const Span *a, const Span *b) {
    return a->token_len == b->token_len && a->raw_len == b->raw_len &&
           memcmp(a->token, b->token, (size_t)a->token_len) == 0 &&
           memcmp(a->raw, b->raw, (size_t)a->raw_len) == 0;
}

static PyObject *numbers(const void *values, Py_ssize_t count, Py_ssize_t width) {
    PyObject *made = PyByteArray_FromStringAndSize(NULL, count * width);
    if (made && count) memcpy(PyByteArray_AS_STRING(made), values, (size_t)(count * width));
    return made;
}

/* The columns; an alternative with its position's sampled key shares that key's object. */
static PyObject *columns(const Entries *sampled, const Entries *alts, const Counts *counts) {
    PyObject *keys = PyList_New(sampled->len), *alt_keys = PyList_New(alts->len);
    PyObject *result = NULL;
    if (!keys || !alt_keys) goto done;
    Py_ssize_t alt = 0;
    for (Py_ssize_t i = 0; i < sampled->len; i++) {
        PyObject *own = key(&sampled->spans[i]);
        if (!own) goto done;
        PyList_SET_ITEM(keys, i, own);
        for (int64_t j = 0; j < counts->values[i]; j++, alt++) {
            PyObject *made;
            if (same_key(&alts->spans[alt], &sampled->spans[i])) {
                made = own;
                Py_INCREF(made);
            } else if (!(made = key(&alts->spans[alt]))) goto done;
            PyList_SET_ITEM(alt_keys, alt, made);
        }
    }
    result = Py_BuildValue(
        "(ONNON)", keys, numbers(sampled->values, sampled->len, sizeof(double)),
        numbers(counts->values, counts->len, sizeof(int64_t)), alt_keys,
        numbers(alts->values, alts->len, sizeof(double)));
done:
    Py_XDECREF(keys);
    Py_XDECREF(alt_keys);
    return result;
}

static PyObject *scan(PyObject *module, PyObject *items) {
    (void)module;
    if (!PyList_Check(items) && !PyTuple_Check(items))
        return PyErr_Format(PyExc_TypeError, "items must be a list or tuple of bytes");
    /* Held in a tuple of our own: the spans point into these bytes, and the allocations below
     * may run a collection whose finalizers could change a list under us. */
    PyObject *held = PySequence_Tuple(items);
    if (!held) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(held);
    for (Py_ssize_t i = 0; i < count; i++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(held, i))) {
            Py_DECREF(held);
            return PyErr_Format(PyExc_TypeError, "items must be a list or tuple of bytes");
        }
    Entries sampled = {0}, alts = {0};
    Counts counts = {0};
    PyObject *result = NULL;
    int fast = extended_precision(), read = 1;
    for (Py_ssize_t i = 0; i < count && read > 0; i++) {
        PyObject *one = PyTuple_GET_ITEM(held, i);
        Ptr start = (Ptr)PyBytes_AS_STRING(one);
        read = item(start, start + PyBytes_GET_SIZE(one), &sampled, &alts, &counts, fast);
    }
    if (read < 0) goto done;
    if (read == 0 || sampled.len == 0) result = Py_NewRef(Py_None);
    else result = columns(&sampled, &alts, &counts);
done:
    PyMem_Free(sampled.spans);
    PyMem_Free(sampled.values);
    PyMem_Free(alts.spans);
    PyMem_Free(alts.values);
    PyMem_Free(counts.values);
    Py_DECREF(held);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_O, "A choice's logprob entries as columns, or None off vLLM's layout."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "plumbline._logprob_scan",
    "Compiled reader of vLLM's chat logprob layout.", 0, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__logprob_scan(void) { return PyModule_Create(&module); }
