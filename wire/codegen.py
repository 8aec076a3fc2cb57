"""Generate straight-line decode and encode functions for one message version.

For a message definition and a version this writes the source of two functions:

- ``decode(data, pos, end) -> (obj, pos)`` reads from a ``bytes`` buffer by position, unpacking
  each run of adjacent fixed-size fields with one precompiled ``struct`` call;
- ``encode(obj, out)`` appends to a ``bytearray``.

Nested arrays and structs are emitted inline as loops, so a whole message decodes in one Python
frame.  The source is compiled once per (message, version) by :mod:`wire.codec` and can be
inspected (``MessageCodec.source``).  Bounds are checked before every slice and every array's
declared length is checked against the bytes that remain, so a hostile length can neither read
past the frame nor make the decoder allocate more than the frame holds.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

from wire.exceptions import DecodeError, TruncatedError
from wire.model import Struct
from wire.schema import Field, Message
from wire.types import PRIMITIVE_FIXED, RUNTIME, WireType, emit_uvarint_decode, primitive, \
    read_uvarint, write_uvarint


#: Names in generated code are unique across every message, so generated functions of several
#: messages can share one namespace (as they do under ``Construct.compile()``).
_names = itertools.count()


class Gen:
    """Accumulates generated source and the objects it refers to."""

    def __init__(self) -> None:
        self.functions: list[list[str]] = []
        self.lines: list[str] = []
        self.env: dict[str, Any] = dict(RUNTIME)
        self.env["_new"] = object.__new__
        self.env["_unpack_from"] = struct.unpack_from
        self.env["_pack"] = struct.pack
        self._consts: dict[Any, str] = {}

    def var(self, prefix: str = "v") -> str:
        return f"{prefix}{next(_names)}"

    def emit(self, ind: str, line: str) -> None:
        self.lines.append(ind + line)

    def const(self, value: Any, prefix: str = "_k") -> str:
        key = (type(value), value) if _hashable(value) else id(value)
        name = self._consts.get(key)
        if name is None:
            name = self.var(prefix)
            self._consts[key] = name
            self.env[name] = value
        return name

    def unpacker(self, fmt: str) -> str:
        return self.const(struct.Struct(">" + fmt).unpack_from, f"_u_{_fmt_name(fmt)}_")

    def packer(self, fmt: str) -> str:
        return self.const(struct.Struct(">" + fmt).pack, f"_p_{_fmt_name(fmt)}_")

    def begin(self, signature: str) -> None:
        self.lines = [f"def {signature}:"]

    def end_function(self) -> None:
        if len(self.lines) == 1:
            self.lines.append("    pass")  # a message with no fields in this version
        self.functions.append(self.lines)
        self.lines = []

    def source(self) -> str:
        return "\n\n".join("\n".join(f) for f in self.functions) + "\n"


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _fmt_name(fmt: str) -> str:
    return "".join(c if c.isalnum() else "x" for c in fmt)


class MessageCodegen:
    """Writes the decode and encode functions of one message version."""

    def __init__(self, message: Message, version: int, cls: type[Struct]):
        self.message = message
        self.version = version
        self.flexible = message.is_flexible(version)
        self.cls = cls
        self.g = Gen()

    # -- helpers -------------------------------------------------------------------------------

    def field_type(self, f: Field, element: bool = False) -> WireType:
        compact = self.flexible and (f.flexible is None or self.version in f.flexible)
        nullable = f.is_nullable(self.version) and not element
        return primitive(f.element_type, compact=compact, nullable=nullable)

    def struct_class(self, owner: type[Struct], f: Field) -> type[Struct]:
        return owner._struct_classes[f.element_type]

    def regular_fields(self, fields) -> list[Field]:
        return [f for f in fields if f.present(self.version) and not f.is_tagged(self.version)]

    def tagged_fields(self, fields) -> list[Field]:
        return sorted((f for f in fields if f.present(self.version) and f.is_tagged(self.version)),
                      key=lambda f: f.tag)

    def min_size(self, fields) -> int:
        """The fewest bytes a struct with these fields can take in this version."""
        size = 1 if self.flexible else 0
        for f in self.regular_fields(fields):
            if f.is_array:
                size += 1 if self.flexible else 4
            elif f.is_struct:
                size += 1 if f.is_nullable(self.version) else self.min_size(f.fields)
            else:
                size += self.field_type(f).min_size
        return size

    def default_expr(self, owner: type[Struct], f: Field) -> str:
        value = owner._default(f)
        if isinstance(value, list):
            return "[]"
        if isinstance(value, Struct):
            return f"{self.g.const(type(value))}()"
        if value is None or isinstance(value, (bool, int, float, str)):
            return repr(value)
        return self.g.const(value)

    # -- decode --------------------------------------------------------------------------------

    def decode_source(self) -> None:
        g = self.g
        g.begin("decode(data, pos, end)")
        self.emit_struct_decode("    ", self.message.fields, self.cls, "obj")
        g.emit("    ", "return obj, pos")
        g.end_function()

    def emit_struct_decode(self, ind: str, fields, owner: type[Struct], target: str) -> None:
        g = self.g
        g.emit(ind, f"{target} = _new({g.const(owner)})")
        regular = self.regular_fields(fields)
        tagged = self.tagged_fields(fields)
        for f in fields:
            if f not in regular:
                g.emit(ind, f"{target}.{f.name} = {self.default_expr(owner, f)}")
        run: list[Field] = []
        for f in regular:
            if not f.is_array and f.element_type in PRIMITIVE_FIXED:
                run.append(f)
                continue
            self.emit_fixed_run_decode(ind, run, target)
            run = []
            self.emit_field_decode(ind, f, owner, f"{target}.{f.name}")
        self.emit_fixed_run_decode(ind, run, target)
        g.emit(ind, f"{target}._unknown_tags = None")
        if self.flexible:
            count = g.var("tc")
            emit_uvarint_decode(g, ind, count)
            reader = self.tags_decoder(tagged, owner) if tagged else "_read_unknown_tags"
            g.emit(ind, f"if {count}: pos = {reader}(data, pos, end, {target}, {count})")

    def emit_fixed_run_decode(self, ind: str, run: list[Field], target: str) -> None:
        if not run:
            return
        g = self.g
        fmt = "".join(PRIMITIVE_FIXED[f.type].fmt for f in run)
        size = struct.calcsize(">" + fmt)
        names = ", ".join(f"{target}.{f.name}" for f in run)
        g.emit(ind, f"{names}{',' if len(run) == 1 else ''} = {g.unpacker(fmt)}(data, pos)")
        g.emit(ind, f"pos += {size}")
        for f in run:
            post = PRIMITIVE_FIXED[f.type].post_decode(f"{target}.{f.name}")
            if post:
                g.emit(ind, f"{target}.{f.name} = {post}")

    def emit_field_decode(self, ind: str, f: Field, owner: type[Struct], target: str) -> None:
        g = self.g
        if f.is_array:
            self.emit_array_decode(ind, f, owner, target)
        elif f.is_struct:
            sub = self.struct_class(owner, f)
            if f.is_nullable(self.version):
                marker = g.var("m")
                g.emit(ind, f"{marker}, = {g.unpacker('b')}(data, pos)")
                g.emit(ind, "pos += 1")
                g.emit(ind, f"if {marker} < 0:")
                g.emit(ind, f"    {target} = None")
                g.emit(ind, "else:")
                ind += "    "
            tmp = g.var("st")
            self.emit_struct_decode(ind, f.fields, sub, tmp)
            g.emit(ind, f"{target} = {tmp}")
        else:
            tmp = g.var("x")
            self.field_type(f).emit_decode(g, ind, tmp)
            g.emit(ind, f"{target} = {tmp}")

    def emit_array_decode(self, ind: str, f: Field, owner: type[Struct], target: str) -> None:
        g = self.g
        n = g.var("n")
        compact = self.flexible and (f.flexible is None or self.version in f.flexible)
        if compact:
            emit_uvarint_decode(g, ind, n)
            g.emit(ind, f"{n} -= 1")
        else:
            g.emit(ind, f"{n}, = {g.unpacker('i')}(data, pos)")
            g.emit(ind, "pos += 4")
        g.emit(ind, f"if {n} < 0:")
        if f.is_nullable(self.version):
            g.emit(ind, f"    if {n} != -1: raise _DecodeError('invalid array length %d' % {n})")
            g.emit(ind, f"    {target} = None")
        else:
            g.emit(ind, f"    raise _DecodeError('non-nullable array {f.name} has length %d' % {n})")
        g.emit(ind, "else:")
        ind += "    "
        if f.is_struct:
            sub = self.struct_class(owner, f)
            min_size = max(1, self.min_size(f.fields))
        else:
            sub = None
            min_size = max(1, self.field_type(f, element=True).min_size)
        g.emit(ind, f"if {n} * {min_size} > end - pos: raise _Truncated("
                    f"'array {f.name} of %d elements runs past the end' % {n})")
        fixed = PRIMITIVE_FIXED.get(f.element_type) if not f.is_struct else None
        if fixed is not None and fixed.post_decode("x") is None:
            g.emit(ind, f"{target} = list(_unpack_from('>%d{fixed.fmt}' % {n}, data, pos))")
            g.emit(ind, f"pos += {n} * {fixed.min_size}")
            return
        lst = g.var("l")
        g.emit(ind, f"{lst} = []")
        g.emit(ind, f"for _ in range({n}):")
        item = g.var("it")
        if sub is not None:
            self.emit_struct_decode(ind + "    ", f.fields, sub, item)
        else:
            self.field_type(f, element=True).emit_decode(g, ind + "    ", item)
        g.emit(ind, f"    {lst}.append({item})")
        g.emit(ind, f"{target} = {lst}")

    def tags_decoder(self, tagged: list[Field], owner: type[Struct]) -> str:
        """A separate function that reads a tag section into ``obj``; returns its name."""
        g = self.g
        name = g.var("_tags")
        saved = g.lines
        g.begin(f"{name}(data, pos, end, obj, count)")
        ind = "    "
        g.emit(ind, "last = -1")
        g.emit(ind, "outer_end = end")
        g.emit(ind, "for _ in range(count):")
        ind2 = ind + "    "
        emit_uvarint_decode(g, ind2, "tag")
        emit_uvarint_decode(g, ind2, "size")
        g.emit(ind2, "if tag <= last: raise _DecodeError('tag %d out of order' % tag)")
        g.emit(ind2, "last = tag")
        g.emit(ind2, "stop = pos + size")
        g.emit(ind2, "if stop > outer_end: raise _Truncated('tagged field %d runs past the end' % tag)")
        g.emit(ind2, "end = stop")
        branch = "if"
        for f in tagged:
            g.emit(ind2, f"{branch} tag == {f.tag}:")
            self.emit_field_decode(ind2 + "    ", f, owner, f"obj.{f.name}")
            branch = "elif"
        g.emit(ind2, "else:")
        g.emit(ind2, "    if obj._unknown_tags is None: obj._unknown_tags = {}")
        g.emit(ind2, "    obj._unknown_tags[tag] = bytes(data[pos:stop])")
        g.emit(ind2, "    pos = stop")
        g.emit(ind2, "if pos != stop: raise _DecodeError('tagged field %d has %d bytes but its value "
                     "took %d' % (tag, size, size - (stop - pos)))")
        g.emit(ind2, "end = outer_end")
        g.emit(ind, "return pos")
        g.end_function()
        g.lines = saved
        return name

    # -- encode --------------------------------------------------------------------------------

    def encode_source(self) -> None:
        g = self.g
        g.begin("encode(obj, out)")
        self.emit_struct_encode("    ", self.message.fields, self.cls, "obj")
        g.end_function()

    def emit_struct_encode(self, ind: str, fields, owner: type[Struct], src: str) -> None:
        g = self.g
        regular = self.regular_fields(fields)
        tagged = self.tagged_fields(fields)
        run: list[Field] = []
        for f in regular:
            if not f.is_array and f.element_type in PRIMITIVE_FIXED:
                run.append(f)
                continue
            self.emit_fixed_run_encode(ind, run, src)
            run = []
            value = g.var("f")
            g.emit(ind, f"{value} = {src}.{f.name}")
            self.emit_field_encode(ind, f, owner, value)
        self.emit_fixed_run_encode(ind, run, src)
        if self.flexible:
            if tagged:
                g.emit(ind, f"{self.tags_encoder(tagged, owner)}({src}, out)")
            else:
                g.emit(ind, f"if {src}._unknown_tags: out += _unknown_tags({src}._unknown_tags, ())")
                g.emit(ind, "else: out.append(0)")

    def emit_fixed_run_encode(self, ind: str, run: list[Field], src: str) -> None:
        if not run:
            return
        fmt = "".join(PRIMITIVE_FIXED[f.type].fmt for f in run)
        args = ", ".join(PRIMITIVE_FIXED[f.type].pre_encode(f"{src}.{f.name}") for f in run)
        self.g.emit(ind, f"out += {self.g.packer(fmt)}({args})")

    def emit_field_encode(self, ind: str, f: Field, owner: type[Struct], value: str) -> None:
        g = self.g
        if f.is_array:
            self.emit_array_encode(ind, f, owner, value)
        elif f.is_struct:
            sub = self.struct_class(owner, f)
            if f.is_nullable(self.version):
                g.emit(ind, f"if {value} is None: out.append(255)")
                g.emit(ind, "else:")
                ind += "    "
                g.emit(ind, "out.append(1)")
            self.emit_struct_encode(ind, f.fields, sub, value)
        else:
            self.field_type(f).emit_encode(g, ind, value)

    def emit_array_encode(self, ind: str, f: Field, owner: type[Struct], value: str) -> None:
        g = self.g
        compact = self.flexible and (f.flexible is None or self.version in f.flexible)
        g.emit(ind, f"if {value} is None:")
        if f.is_nullable(self.version):
            g.emit(ind, "    out.append(0)" if compact else "    out += b'\\xff\\xff\\xff\\xff'")
        else:
            g.emit(ind, f"    raise _EncodeError('non-nullable array {f.name} is None')")
        g.emit(ind, "else:")
        ind += "    "
        n = g.var("n")
        g.emit(ind, f"{n} = len({value})")
        if compact:
            g.emit(ind, f"if {n} < 127: out.append({n} + 1)")
            g.emit(ind, f"else: out += _write_uvarint({n} + 1)")
        else:
            g.emit(ind, f"out += {g.packer('i')}({n})")
        fixed = PRIMITIVE_FIXED.get(f.element_type) if not f.is_struct else None
        if fixed is not None and fixed.post_decode("x") is None:
            g.emit(ind, f"out += _pack('>%d{fixed.fmt}' % {n}, *{value})")
            return
        item = g.var("it")
        g.emit(ind, f"for {item} in {value}:")
        if f.is_struct:
            self.emit_struct_encode(ind + "    ", f.fields, self.struct_class(owner, f), item)
        else:
            self.field_type(f, element=True).emit_encode(g, ind + "    ", item)

    def tags_encoder(self, tagged: list[Field], owner: type[Struct]) -> str:
        """A separate function writing the tag section of ``obj``; returns its name."""
        g = self.g
        name = g.var("_etags")
        saved = g.lines
        g.begin(f"{name}(obj, out)")
        ind = "    "
        g.emit(ind, "known = []")
        g.emit(ind, "outer = out")
        for f in tagged:
            value = g.var("t")
            g.emit(ind, f"{value} = obj.{f.name}")
            g.emit(ind, f"if {self.differs_from_default(owner, f, value)}:")
            g.emit(ind, "    out = bytearray()")
            self.emit_field_encode(ind + "    ", f, owner, value)
            g.emit(ind, f"    known.append(({f.tag}, out))")
        g.emit(ind, "out = outer")
        g.emit(ind, "if obj._unknown_tags or known: out += _unknown_tags(obj._unknown_tags or {}, known)")
        g.emit(ind, "else: out.append(0)")
        g.end_function()
        g.lines = saved
        return name

    def differs_from_default(self, owner: type[Struct], f: Field, value: str) -> str:
        if f.default_is_null:
            return f"{value} is not None"
        if f.is_array:
            return f"{value}"
        if f.is_struct:
            default = owner._default(f)
            cls = type(default)
            if cls._fields and all(not sf.is_struct and not sf.is_array for sf in cls._fields):
                # field by field, as Struct.__eq__ compares, without a call per field (a Fetch
                # answer asks this of three tagged structs in every partition)
                differs = " or ".join(
                    f"{value}.{sf.name} != {self.g.const(getattr(default, sf.name))}"
                    for sf in cls._fields)
                return f"({value}.__class__ is not {self.g.const(cls)} or {differs})"
            return f"{value} != {self.g.const(default)}"
        return f"{value} != {self.default_expr(owner, f)}"


def encode_tag_section(unknown: dict[int, bytes], known) -> bytes:
    """The tag section: known tagged fields (already encoded) merged with preserved unknown ones,
    in ascending tag order as Kafka requires."""
    entries = dict(unknown)
    for tag, raw in known:
        entries[tag] = raw
    out = bytearray(write_uvarint(len(entries)))
    for tag in sorted(entries):
        raw = entries[tag]
        out += write_uvarint(tag)
        out += write_uvarint(len(raw))
        out += raw
    return bytes(out)


def read_unknown_tags(data, pos: int, end: int, obj: Struct, count: int) -> int:
    """Read a tag section of a struct with no known tagged fields: every tag is kept as bytes."""
    last = -1
    unknown = {}
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        if tag <= last:
            raise DecodeError(f"tag {tag} out of order")
        last = tag
        stop = pos + size
        if stop > end:
            raise TruncatedError(f"tagged field {tag} runs past the end")
        unknown[tag] = bytes(data[pos:stop])
        pos = stop
    obj._unknown_tags = unknown
    return pos


def generate(message: Message, version: int, cls: type[Struct]) -> tuple[str, dict[str, Any]]:
    """Source and environment of ``decode`` and ``encode`` for one message version."""
    gen = MessageCodegen(message, version, cls)
    gen.decode_source()
    gen.encode_source()
    gen.g.env["_unknown_tags"] = encode_tag_section
    gen.g.env["_read_unknown_tags"] = read_unknown_tags
    return gen.g.source(), gen.g.env

