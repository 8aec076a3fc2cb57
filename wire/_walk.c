/*
 * The record walk of a v2 record batch, at native speed.
 *
 * check_records(data, count, strict, last_offset_delta) -> bool says whether the records
 * section `data` (uncompressed: what follows the 61-byte batch header) holds exactly `count`
 * well-formed records with valid offset deltas.  It makes exactly the checks of the pure-Python
 * walk in wire/records.py (_parse_records, and check_batch's offset-delta rules), which stays
 * the reference: a batch this refuses is walked again in Python, which says why.  Tests hold
 * the two to the same verdict on every batch they make, fuzzed ones included.
 *
 * Varints are Kafka's: zigzag LEB128, at most 5 bytes (varint) or 10 (varlong), bits past 32
 * or 64 wrapping as in Java, never read past the end of the record they belong to.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Reads an unsigned LEB128 value of at most max_bytes bytes from buf[*pos, end); 0 on
 * truncation or an over-long encoding. */
static int
read_uvarint(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, int max_bytes,
             uint64_t *out)
{
    uint64_t value = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        Py_ssize_t at = *pos + i;
        if (at >= end)
            return 0;
        unsigned char byte = buf[at];
        if (shift < 64)
            value |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *pos = at + 1;
            *out = value;
            return 1;
        }
        shift += 7;
    }
    return 0;
}

static int
read_varint(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, int32_t *out)
{
    uint64_t raw;
    if (!read_uvarint(buf, pos, end, 5, &raw))
        return 0;
    uint32_t bits = (uint32_t)(raw & 0xFFFFFFFFu);
    *out = (int32_t)((bits >> 1) ^ (0u - (bits & 1u)));
    return 1;
}

static int
skip_varlong(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end)
{
    uint64_t raw;
    return read_uvarint(buf, pos, end, 10, &raw);
}

/* 1 when the records are valid, 0 when not. */
static int
walk(const unsigned char *data, Py_ssize_t end, long long count, int strict,
     long long last_delta)
{
    if (count < 0)
        return 0;
    Py_ssize_t pos = 0;
    long long expected = 0, previous = -1;
    for (long long index = 0; index < count; index++) {
        int32_t length, offset_delta, key_len, value_len, header_count;
        if (pos >= end)
            return 0;
        if (!read_varint(data, &pos, end, &length))
            return 0;
        if (length < 0 || length > end - pos)
            return 0;
        Py_ssize_t rec_end = pos + length;
        if (pos >= rec_end)
            return 0;
        pos += 1; /* attributes */
        if (!skip_varlong(data, &pos, rec_end))
            return 0; /* timestamp delta */
        if (!read_varint(data, &pos, rec_end, &offset_delta))
            return 0;
        if (!read_varint(data, &pos, rec_end, &key_len))
            return 0;
        if (key_len >= 0) {
            if (key_len > rec_end - pos)
                return 0;
            pos += key_len;
        }
        if (!read_varint(data, &pos, rec_end, &value_len))
            return 0;
        if (value_len >= 0) {
            if (value_len > rec_end - pos)
                return 0;
            pos += value_len;
        }
        if (!read_varint(data, &pos, rec_end, &header_count))
            return 0;
        if (header_count < 0 || header_count > rec_end - pos)
            return 0;
        for (int32_t h = 0; h < header_count; h++) {
            int32_t hk_len, hv_len;
            if (!read_varint(data, &pos, rec_end, &hk_len))
                return 0;
            if (hk_len < 0 || hk_len > rec_end - pos)
                return 0;
            pos += hk_len;
            if (!read_varint(data, &pos, rec_end, &hv_len))
                return 0;
            if (hv_len >= 0) {
                if (hv_len > rec_end - pos)
                    return 0;
                pos += hv_len;
            }
        }
        if (pos != rec_end)
            return 0;
        if (strict) {
            if (offset_delta != expected)
                return 0;
            expected++;
        } else {
            if (offset_delta <= previous || offset_delta > last_delta)
                return 0;
            previous = offset_delta;
        }
    }
    return pos == end;
}

static PyObject *
check_records(PyObject *module, PyObject *args)
{
    Py_buffer view;
    long long count, last_delta;
    int strict;
    if (!PyArg_ParseTuple(args, "y*LpL", &view, &count, &strict, &last_delta))
        return NULL;
    int ok;
    if (view.len < 65536) {
        ok = walk((const unsigned char *)view.buf, view.len, count, strict, last_delta);
    } else {
        /* a large batch: let the threads of an in-process cluster's clients run meanwhile */
        Py_BEGIN_ALLOW_THREADS
        ok = walk((const unsigned char *)view.buf, view.len, count, strict, last_delta);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"check_records", check_records, METH_VARARGS,
     "check_records(data, count, strict, last_offset_delta) -> bool: whether the records "
     "section of a v2 batch holds exactly count well-formed records with valid offset "
     "deltas (the checks of wire.records._parse_records and check_batch)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "wire._walk",
    "The record walk of a v2 record batch, at native speed (see wire/records.py).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__walk(void)
{
    return PyModule_Create(&module);
}
