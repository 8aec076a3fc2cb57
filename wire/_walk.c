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
 *
 * crc32c(data) -> int is the CRC-32C (Castagnoli) a v2 batch carries: with the CPU's crc32
 * instruction where there is one (x86-64 with SSE 4.2), else from a table.  It spares the
 * broker the crc32c package's import (which reads package metadata) on its way to serving.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

/* -- CRC-32C ----------------------------------------------------------------------------- */

#define CRC32C_POLY 0x82F63B78u /* Castagnoli, reflected */

static uint32_t crc_table[256];

static void
crc_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
        crc_table[i] = c;
    }
}

static uint32_t
crc_by_table(uint32_t crc, const unsigned char *buf, Py_ssize_t len)
{
    for (Py_ssize_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ buf[i]) & 0xFFu] ^ (crc >> 8);
    return crc;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_CRC_INSTRUCTION 1

/* The register after `len` bytes from `crc` (no inversions), one instruction per 8 bytes. */
__attribute__((target("sse4.2"))) static uint32_t
crc_by_instruction(uint32_t crc, const unsigned char *buf, Py_ssize_t len)
{
    uint64_t c = crc;
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, buf + i, 8);
        c = __builtin_ia32_crc32di(c, word);
    }
    uint32_t c32 = (uint32_t)c;
    for (; i < len; i++)
        c32 = __builtin_ia32_crc32qi(c32, buf[i]);
    return c32;
}

/* The instruction's latency exceeds its issue interval: three streams over three blocks of
 * STREAM bytes keep it busy, joined by "shifting" a register over a block's worth of zero
 * bytes, which is linear in the register: a table per byte of it (shift_table). */
#define STREAM 512
static uint32_t shift_table[4][256];

static uint32_t
shift_block(uint32_t crc)
{
    return shift_table[0][crc & 0xFFu] ^ shift_table[1][(crc >> 8) & 0xFFu] ^
           shift_table[2][(crc >> 16) & 0xFFu] ^ shift_table[3][crc >> 24];
}

static void
shift_table_init(void)
{
    static const unsigned char zeros[STREAM];
    for (int k = 0; k < 4; k++) {
        uint32_t bit[8];
        for (int b = 0; b < 8; b++)
            bit[b] = crc_by_instruction(1u << (8 * k + b), zeros, STREAM);
        for (int v = 0; v < 256; v++) {
            uint32_t x = 0;
            for (int b = 0; b < 8; b++)
                if (v & (1 << b))
                    x ^= bit[b];
            shift_table[k][v] = x;
        }
    }
}

__attribute__((target("sse4.2"))) static uint32_t
crc_interleaved(uint32_t crc, const unsigned char *buf, Py_ssize_t len)
{
    while (len >= 3 * STREAM) {
        uint64_t c0 = crc, c1 = 0, c2 = 0;
        for (Py_ssize_t i = 0; i < STREAM; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, buf + i, 8);
            memcpy(&w1, buf + STREAM + i, 8);
            memcpy(&w2, buf + 2 * STREAM + i, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        crc = shift_block(shift_block((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
        buf += 3 * STREAM;
        len -= 3 * STREAM;
    }
    return crc_by_instruction(crc, buf, len);
}
#endif

static int crc_use_instruction;

static uint32_t
crc32c_of(const unsigned char *buf, Py_ssize_t len)
{
#ifdef HAVE_CRC_INSTRUCTION
    if (crc_use_instruction)
        return ~crc_interleaved(0xFFFFFFFFu, buf, len);
#endif
    return ~crc_by_table(0xFFFFFFFFu, buf, len);
}

static PyObject *
crc32c(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t crc;
    if (view.len < 65536) {
        crc = crc32c_of((const unsigned char *)view.buf, view.len);
    } else {
        Py_BEGIN_ALLOW_THREADS
        crc = crc32c_of((const unsigned char *)view.buf, view.len);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

static PyMethodDef methods[] = {
    {"crc32c", crc32c, METH_O,
     "crc32c(data) -> int: the CRC-32C (Castagnoli) of a bytes-like object, as a v2 record "
     "batch carries it."},
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
    crc_table_init();
#ifdef HAVE_CRC_INSTRUCTION
    __builtin_cpu_init();
    crc_use_instruction = __builtin_cpu_supports("sse4.2");
    if (crc_use_instruction)
        shift_table_init();
#endif
    return PyModule_Create(&module);
}
