/* The vocabulary's keys in C: a bounded table of key -> id, and scan_ids, which reads a choice's
 * items and gives ids straight away, with no Python object per key.
 *
 * KeyTable(capacity, max_key_bytes, seed) holds at most `capacity` keys of at most
 * `max_key_bytes` each (a key is a token's JSON content, NUL, its `bytes` JSON), hashed with
 * SipHash-1-3 under the 16-byte `seed`, so a backend choosing tokens cannot choose collisions.
 * Memory grows with the keys held only. Nothing here calls back into Python while the table is
 * read or changed, so under the GIL every call sees the table whole.
 *
 * scan_ids(items, table) returns None off vLLM's layout, else (ids, logprobs, alt_counts,
 * alt_ids, alt_logprobs, missing, text, escaped): ids as int64 bytearrays, where a key not in
 * the table is -(1 + j) for missing[j], each missing key once (keys too long for the table are
 * listed each time they occur); text is the sampled tokens' JSON contents joined, escaped
 * whether any holds a backslash.
 */
#include "_logprob_scan.h"

#include <stdlib.h>
#include <string.h>

#define LONGEST_KEY 1024 /* the configuration's bound on max_key_bytes */
#define FIRST_SLOTS 1024

/* One cache line: a key of up to INLINE_KEY bytes (nearly all of them: a token's JSON and its
 * `bytes` list) is compared in place, so a lookup touches one line; longer keys live in the arena. */
#define INLINE_KEY 44
typedef struct {
    uint64_t hash;
    int64_t id;
    int32_t len; /* -1: an empty slot */
    unsigned char key[INLINE_KEY]; /* the key, or (longer keys) its offset into the arena */
} Slot;

typedef struct {
    PyObject_HEAD
    uint64_t k0, k1;
    Slot *slots;
    size_t mask; /* slots - 1; slots is a power of two, at least twice the keys held */
    Py_ssize_t count, capacity, max_key;
    unsigned char *arena;
    size_t arena_len, arena_cap;
} KeyTable;

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                        \
    do {                                                                                \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                       \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                          \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                          \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                       \
    } while (0)

static uint64_t siphash13(uint64_t k0, uint64_t k1, const unsigned char *p, size_t len) {
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    size_t at = 0;
    for (; at + 8 <= len; at += 8) {
        uint64_t word = 0;
        for (int i = 0; i < 8; i++) word |= (uint64_t)p[at + i] << (8 * i);
        v3 ^= word;
        SIPROUND;
        v0 ^= word;
    }
    uint64_t last = (uint64_t)len << 56;
    for (size_t i = 0; at + i < len; i++) last |= (uint64_t)p[at + i] << (8 * i);
    v3 ^= last;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

_Static_assert(sizeof(Slot) == 64, "a slot is one cache line");

/* Slots on cache-line boundaries, so no lookup touches two lines (free with free()). */
static Slot *slots_new(size_t count) {
    Slot *slots = aligned_alloc(64, count * sizeof(Slot));
    if (!slots) return NULL;
    for (size_t i = 0; i < count; i++) slots[i].len = -1;
    return slots;
}

static const unsigned char *slot_key(const KeyTable *t, const Slot *s) {
    if (s->len <= INLINE_KEY) return s->key;
    size_t offset;
    memcpy(&offset, s->key, sizeof(offset));
    return t->arena + offset;
}

/* The slot holding the key, or the empty one where it would go. */
static Slot *find(const KeyTable *t, const unsigned char *key, Py_ssize_t len, uint64_t hash) {
    for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
        Slot *s = &t->slots[i];
        if (s->len < 0) return s;
        if (s->hash == hash && s->len == len && memcmp(slot_key(t, s), key, (size_t)len) == 0)
            return s;
    }
}

static int grow_slots(KeyTable *t) {
    size_t count = (t->mask + 1) * 2;
    if (count > PY_SSIZE_T_MAX / sizeof(Slot)) { PyErr_NoMemory(); return 0; }
    Slot *slots = slots_new(count), *old = t->slots;
    if (!slots) { PyErr_NoMemory(); return 0; }
    size_t old_count = t->mask + 1;
    t->slots = slots;
    t->mask = count - 1;
    for (size_t i = 0; i < old_count; i++) {
        if (old[i].len < 0) continue;
        size_t j = old[i].hash & t->mask;
        while (slots[j].len >= 0) j = (j + 1) & t->mask;
        slots[j] = old[i];
    }
    free(old);
    return 1;
}

/* Adds or updates a key: 1 done, 0 the table is full, -1 out of memory (error set). */
static int put(KeyTable *t, const unsigned char *key, Py_ssize_t len, int64_t id) {
    uint64_t hash = siphash13(t->k0, t->k1, key, (size_t)len);
    Slot *slot = find(t, key, len, hash);
    if (slot->len >= 0) {
        slot->id = id;
        return 1;
    }
    if (t->count >= t->capacity) return 0;
    if (len <= INLINE_KEY) {
        memcpy(slot->key, key, (size_t)len);
    } else {
        if (t->arena_len + (size_t)len > t->arena_cap) {
            size_t cap = t->arena_cap ? t->arena_cap : 4096;
            while (cap < t->arena_len + (size_t)len) cap *= 2;
            unsigned char *arena = PyMem_Realloc(t->arena, cap);
            if (!arena) { PyErr_NoMemory(); return -1; }
            t->arena = arena;
            t->arena_cap = cap;
        }
        memcpy(t->arena + t->arena_len, key, (size_t)len);
        memcpy(slot->key, &t->arena_len, sizeof(t->arena_len));
        t->arena_len += (size_t)len;
    }
    slot->hash = hash;
    slot->id = id;
    slot->len = (int32_t)len;
    t->count++;
    if ((size_t)t->count * 2 > t->mask + 1 && !grow_slots(t)) return -1;
    return 1;
}

/* Empty, with the first slots only; where memory runs out the table stays as it was. */
static int reset(KeyTable *t) {
    Slot *slots = slots_new(FIRST_SLOTS);
    if (!slots) { PyErr_NoMemory(); return 0; }
    free(t->slots);
    PyMem_Free(t->arena);
    t->slots = slots;
    t->arena = NULL;
    t->arena_len = t->arena_cap = 0;
    t->count = 0;
    t->mask = FIRST_SLOTS - 1;
    return 1;
}

static int table_init(KeyTable *t, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"capacity", "max_key_bytes", "seed", NULL};
    Py_ssize_t capacity, max_key;
    Py_buffer seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "nny*", names, &capacity, &max_key, &seed))
        return -1;
    int ok = seed.len == 16 && capacity >= 1 && max_key >= 1 && max_key <= LONGEST_KEY;
    if (ok) {
        const unsigned char *bytes = seed.buf;
        t->k0 = t->k1 = 0;
        for (int i = 0; i < 8; i++) {
            t->k0 |= (uint64_t)bytes[i] << (8 * i);
            t->k1 |= (uint64_t)bytes[8 + i] << (8 * i);
        }
    }
    PyBuffer_Release(&seed);
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "KeyTable needs capacity >= 1, 1 <= max_key_bytes <= %d and a 16-byte seed",
                     LONGEST_KEY);
        return -1;
    }
    t->capacity = capacity;
    t->max_key = max_key;
    return reset(t) ? 0 : -1;
}

static void table_dealloc(KeyTable *t) {
    free(t->slots);
    PyMem_Free(t->arena);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static Py_ssize_t table_len(KeyTable *t) { return t->count; }

/* A bytes key that can be in the table (one NUL, not too long): its bytes, else NULL. */
static const unsigned char *storable(const KeyTable *t, PyObject *key, Py_ssize_t *len) {
    if (!PyBytes_Check(key)) return NULL;
    *len = PyBytes_GET_SIZE(key);
    const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(key);
    if (*len > t->max_key || !memchr(bytes, 0, (size_t)*len)) return NULL;
    return bytes;
}

static int64_t get_id(const KeyTable *t, const unsigned char *key, Py_ssize_t len) {
    Slot *slot = find(t, key, len, siphash13(t->k0, t->k1, key, (size_t)len));
    return slot->len >= 0 ? slot->id : -1;
}

static PyObject *table_get(KeyTable *t, PyObject *key) {
    Py_ssize_t len;
    const unsigned char *bytes = storable(t, key, &len);
    int64_t id = bytes ? get_id(t, bytes, len) : -1;
    if (id < 0) Py_RETURN_NONE;
    return PyLong_FromLongLong(id);
}

static PyObject *table_add(KeyTable *t, PyObject *args) {
    PyObject *keys, *ids;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &keys, &PyList_Type, &ids)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(keys);
    if (PyList_GET_SIZE(ids) != count)
        return PyErr_Format(PyExc_ValueError, "add needs as many ids as keys");
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i), *id = PyList_GET_ITEM(ids, i);
        Py_ssize_t len;
        const unsigned char *bytes = storable(t, key, &len);
        if (!bytes) return PyErr_Format(PyExc_ValueError, "a key is not bytes with a NUL, "
                                                          "or is longer than max_key_bytes");
        if (!PyLong_CheckExact(id)) return PyErr_Format(PyExc_TypeError, "ids must be ints");
        int64_t value = PyLong_AsLongLong(id);
        if (value == -1 && PyErr_Occurred()) return NULL;
        if (value < 0) return PyErr_Format(PyExc_ValueError, "ids must not be negative");
        int done = put(t, bytes, len, value);
        if (done < 0) return NULL;
        if (done == 0) return PyErr_Format(PyExc_ValueError, "the key table is full");
    }
    Py_RETURN_NONE;
}

static PyObject *table_clear(KeyTable *t, PyObject *unused) {
    (void)unused;
    if (!reset(t)) return NULL;
    Py_RETURN_NONE;
}

/* ids (-(1 + j) for keys[j] not held) for a list of bytes keys, and the keys not held. */
static PyObject *table_lookup(KeyTable *t, PyObject *keys) {
    if (!PyList_Check(keys)) return PyErr_Format(PyExc_TypeError, "keys must be a list");
    Py_ssize_t count = PyList_GET_SIZE(keys);
    PyObject *ids = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *missing = PyList_New(0);
    if (!ids || !missing) goto fail;
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(ids);
    /* Every id first: the list of missing keys is made after, so nothing runs in between. */
    Py_ssize_t misses = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t len;
        const unsigned char *bytes = storable(t, PyList_GET_ITEM(keys, i), &len);
        int64_t id = bytes ? get_id(t, bytes, len) : -1;
        out[i] = id >= 0 ? id : -(1 + misses++);
    }
    for (Py_ssize_t i = 0; i < count && misses; i++)
        if (out[i] < 0 && PyList_Append(missing, PyList_GET_ITEM(keys, i)) < 0) goto fail;
    return Py_BuildValue("(NN)", ids, missing);
fail:
    Py_XDECREF(ids);
    Py_XDECREF(missing);
    return NULL;
}

static PyMethodDef table_methods[] = {
    {"get", (PyCFunction)table_get, METH_O, "The key's id, or None."},
    {"add", (PyCFunction)table_add, METH_VARARGS, "Hold these keys with these ids."},
    {"clear", (PyCFunction)table_clear, METH_NOARGS, "Hold nothing, and free the memory."},
    {"lookup", (PyCFunction)table_lookup, METH_O,
     "Ids of bytes keys (-(1 + j) for missing[j]) and the keys missing."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods table_sequence = {.sq_length = (lenfunc)table_len};

PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plumbline._logprob_scan.KeyTable",
    .tp_doc = "A bounded table of logprob vocabulary keys and their ids.",
    .tp_basicsize = sizeof(KeyTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)table_init,
    .tp_dealloc = (destructor)table_dealloc,
    .tp_methods = table_methods,
    .tp_as_sequence = &table_sequence,
};

/* The keys a scan found missing, each once: open addressing over their indexes. */
typedef struct {
    const Span **spans;
    uint64_t *hashes;
    Py_ssize_t len;
    Py_ssize_t *index; /* -1 empty, else into spans */
    size_t mask;
} Missing;

static int missing_init(Missing *m, Py_ssize_t most) {
    size_t slots = 16;
    while (slots < (size_t)most * 2) slots *= 2;
    m->spans = PyMem_Malloc((size_t)most * sizeof(Span *));
    m->hashes = PyMem_Malloc((size_t)most * sizeof(uint64_t));
    m->index = PyMem_Malloc(slots * sizeof(Py_ssize_t));
    m->mask = slots - 1;
    m->len = 0;
    if (!m->spans || !m->hashes || !m->index) { PyErr_NoMemory(); return 0; }
    for (size_t i = 0; i < slots; i++) m->index[i] = -1;
    return 1;
}

static void missing_free(Missing *m) {
    PyMem_Free(m->spans);
    PyMem_Free(m->hashes);
    PyMem_Free(m->index);
}

/* The missing key's place j; a key too long for the table (hash unused) is listed each time. */
static Py_ssize_t missing_place(Missing *m, const Span *span, uint64_t hash, int hashed) {
    if (hashed) {
        for (size_t i = hash & m->mask;; i = (i + 1) & m->mask) {
            Py_ssize_t at = m->index[i];
            if (at < 0) {
                m->index[i] = m->len;
                break;
            }
            if (m->hashes[at] == hash && same_key(m->spans[at], span)) return at;
        }
    }
    m->spans[m->len] = span;
    m->hashes[m->len] = hash;
    return m->len++;
}

/* The span's id, or -(1 + its place among the missing). */
static int64_t resolve(const KeyTable *t, const Span *span, Missing *missing) {
    Py_ssize_t len = span->token_len + 1 + span->raw_len;
    uint64_t hash = 0;
    int fits = len <= t->max_key;
    if (fits) {
        unsigned char key[LONGEST_KEY];
        memcpy(key, span->token, (size_t)span->token_len);
        key[span->token_len] = 0;
        memcpy(key + span->token_len + 1, span->raw, (size_t)span->raw_len);
        hash = siphash13(t->k0, t->k1, key, (size_t)len);
        Slot *slot = find(t, key, len, hash);
        if (slot->len >= 0) return slot->id;
    }
    return -(1 + (int64_t)missing_place(missing, span, hash, fits));
}

static PyObject *ids_result(const Columns *read, const int64_t *ids, const Missing *missing) {
    Py_ssize_t n = read->sampled.len, m = read->alts.len, text_len = 0;
    int escaped = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Span *s = &read->sampled.spans[i];
        text_len += s->token_len;
        if (!escaped && memchr(s->token, '\\', (size_t)s->token_len)) escaped = 1;
    }
    PyObject *text = PyBytes_FromStringAndSize(NULL, text_len);
    PyObject *keys = PyList_New(missing->len);
    if (!text || !keys) {
        Py_XDECREF(text);
        Py_XDECREF(keys);
        return NULL;
    }
    char *into = PyBytes_AS_STRING(text);
    for (Py_ssize_t i = 0; i < n; i++) {
        const Span *s = &read->sampled.spans[i];
        memcpy(into, s->token, (size_t)s->token_len);
        into += s->token_len;
    }
    for (Py_ssize_t j = 0; j < missing->len; j++) {
        PyObject *key = bytes_of_key(missing->spans[j]);
        if (!key) {
            Py_DECREF(text);
            Py_DECREF(keys);
            return NULL;
        }
        PyList_SET_ITEM(keys, j, key);
    }
    return Py_BuildValue(
        "(NNNNNNNO)", numbers_of(ids, n, sizeof(int64_t)),
        numbers_of(read->sampled.values, n, sizeof(double)),
        numbers_of(read->counts.values, read->counts.len, sizeof(int64_t)),
        numbers_of(ids + n, m, sizeof(int64_t)), numbers_of(read->alts.values, m, sizeof(double)),
        keys, text, escaped ? Py_True : Py_False);
}

PyObject *scan_ids(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *items;
    KeyTable *table;
    if (!PyArg_ParseTuple(args, "OO!", &items, &KeyTableType, &table)) return NULL;
    Columns read;
    int status = columns_read(items, &read);
    PyObject *result = NULL;
    if (status <= 0) {
        columns_free(&read);
        return status == 0 ? Py_NewRef(Py_None) : NULL;
    }
    Py_ssize_t n = read.sampled.len, m = read.alts.len;
    int64_t *ids = PyMem_Malloc((size_t)(n + m) * sizeof(int64_t));
    Missing missing = {0};
    if (!ids) {
        PyErr_NoMemory();
        goto done;
    }
    if (!missing_init(&missing, n + m)) goto done;
    /* Every id before any Python object is made: no collection can run in between. */
    Py_ssize_t alt = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Span *sampled = &read.sampled.spans[i];
        ids[i] = resolve(table, sampled, &missing);
        for (int64_t j = 0; j < read.counts.values[i]; j++, alt++) {
            const Span *other = &read.alts.spans[alt];
            ids[n + alt] = same_key(other, sampled) ? ids[i] : resolve(table, other, &missing);
        }
    }
    result = ids_result(&read, ids, &missing);
done:
    PyMem_Free(ids);
    missing_free(&missing);
    columns_free(&read);
    return result;
}
