"""Reading ``.proto`` text into a :class:`~.model.ProtoFile`.

Confluent parses schema text with Square Wire's parser, so this reader follows Wire's grammar
and leniencies (no ``syntax`` line means proto2 rules: fields need a label; a field's ``default``
and ``json_name`` are pulled out of its options; adjacent string literals join; ``;`` alone is
skipped) and reports problems the way Wire does: ``Syntax error in :LINE:COL: <what>``, the
location being that of the cursor when the problem is seen (Confluent parses with an empty file
name, hence the bare ``:``).  Comments are skipped: Confluent's canonical text drops them.
"""

from __future__ import annotations

from typing import Any, Optional

from .model import (BOOLEAN, ENUM, LIST, MAP, MAX_TAG, NUMBER, OPTION, PROTO2, PROTO3, STRING,
                    Enum, EnumConstant, Extend, Extensions, Field, Group, Message, OneOf,
                    Option, Primitive, ProtoFile, Range, Reserved, Rpc, Service)


class ProtoSyntaxError(ValueError):
    """The text is not a ``.proto`` file Wire would read; ``str()`` is Wire's message."""


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}

# where a declaration appears, and what each place allows
_FILE, _MESSAGE, _ENUM, _RPC, _EXTEND, _SERVICE = range(6)


class _Cursor:
    """Character-level reading with Wire's whitespace, comment and literal rules."""

    def __init__(self, data: str):
        self.data = data
        self.pos = 0
        self.line = 0
        self.line_start = 0

    # -- positions and errors --------------------------------------------------------------
    def where(self) -> tuple[int, int]:
        return self.line + 1, self.pos - self.line_start + 1

    def fail(self, message: str, where: Optional[tuple[int, int]] = None) -> ProtoSyntaxError:
        line, column = where or self.where()
        return ProtoSyntaxError(f"Syntax error in :{line}:{column}: {message}")

    def expect(self, condition: bool, message: str, where=None) -> None:
        if not condition:
            raise self.fail(message, where)

    def _newline(self) -> None:
        self.line += 1
        self.line_start = self.pos

    # -- whitespace and comments -----------------------------------------------------------
    def exhausted(self) -> bool:
        return self.pos == len(self.data)

    def skip_space(self, comments: bool = True) -> None:
        data = self.data
        while self.pos < len(data):
            c = data[self.pos]
            if c in " \t\r\n":
                self.pos += 1
                if c == "\n":
                    self._newline()
            elif comments and c == "/":
                self._comment()
            else:
                return

    def skip_documentation(self) -> None:
        while True:
            self.skip_space(comments=False)
            if self.exhausted() or self.data[self.pos] != "/":
                return
            self._comment()

    def _comment(self) -> None:
        data = self.data
        self.pos += 1
        kind = data[self.pos] if self.pos < len(data) else ""
        self.pos += 1
        if kind == "*":
            while self.pos + 1 < len(data):
                if data[self.pos] == "*" and data[self.pos + 1] == "/":
                    self.pos += 2
                    return
                if data[self.pos] == "\n":
                    self._newline()
                self.pos += 1
            raise self.fail("unterminated comment")
        if kind == "/":
            while self.pos < len(data):
                c = data[self.pos]
                self.pos += 1
                if c == "\n":
                    self._newline()
                    break
            return
        raise self.fail("unexpected '/'")

    def skip_trailing_comment(self) -> None:
        """A comment on the rest of a declaration's line (Wire keeps it as documentation)."""
        data = self.data
        while self.pos < len(data):
            c = data[self.pos]
            if c in " \t":
                self.pos += 1
            elif c == "/":
                self.pos += 1
                break
            else:
                return
        if self.pos >= len(data):
            return
        if data[self.pos] not in "/*":
            where = self.where()            # Wire takes the place before stepping back
            self.pos -= 1
            raise self.fail("expected '//' or '/*'", where)
        star = data[self.pos] == "*"
        self.pos += 1
        if star:
            while True:
                self.expect(self.pos < len(data), "trailing comment must be closed")
                if data.startswith("*/", self.pos):
                    self.pos += 2
                    break
                self.pos += 1
            while self.pos < len(data):
                c = data[self.pos]
                self.pos += 1
                if c == "\n":
                    self._newline()
                    break
                self.expect(c in " \t", "no syntax may follow trailing comment")
        else:
            while self.pos < len(data):
                c = data[self.pos]
                self.pos += 1
                if c == "\n":
                    self._newline()
                    break

    # -- characters --------------------------------------------------------------------------
    def peek(self) -> str:
        self.skip_space()
        self.expect(self.pos < len(self.data), "unexpected end of file")
        return self.data[self.pos]

    def read(self) -> str:
        c = self.peek()
        self.pos += 1
        return c

    def take(self, c: str) -> bool:
        """Consume ``c`` if it is next."""
        if self.peek() == c:
            self.pos += 1
            return True
        return False

    def require(self, c: str) -> None:
        got = self.read()
        self.expect(got == c, f"expected '{c}' but was '{got}'")

    # -- tokens ------------------------------------------------------------------------------
    def word(self, leading_digit: bool = True) -> str:
        self.skip_space()
        data, start = self.data, self.pos
        while self.pos < len(data) and data[self.pos] in _WORD_CHARS:
            self.pos += 1
        self.expect(start < self.pos, "expected a word")
        if not leading_digit:
            self.expect(not data[start].isdigit(),
                        "field and constant names cannot start with a digit",
                        (self.line + 1, start - self.line_start))
        return data[start:self.pos]

    def name(self, keep_wrap: bool = False) -> str:
        c = self.peek()
        for open_, close in (("(", ")"), ("[", "]")):
            if c == open_:
                self.pos += 1
                word = self.word()
                self.expect(self.read() == close, f"expected '{close}'")
                return f"{open_}{word}{close}" if keep_wrap else word
        return self.word()

    def integer(self) -> int:
        text = self.word()
        digits, radix = text, 10
        if text.startswith(("0x", "0X")):
            digits, radix = text[2:], 16
        try:
            if not digits or digits[0] == "_" or "_" in digits:
                raise ValueError
            value = int(digits, radix)
        except ValueError:
            raise self.fail(f"expected an integer but was {text}") from None
        if not -(1 << 31) <= value < (1 << 31):
            raise self.fail(f"expected an integer but was {text}")
        return value

    def quoted(self) -> str:
        quote = self.read()
        self.expect(quote in "\"'", "expected quoted string")
        data, out = self.data, []
        while self.pos < len(data):
            c = data[self.pos]
            self.pos += 1
            if c == quote:
                if self.peek() in "\"'":          # adjacent literals join
                    quote = self.read()
                    continue
                return "".join(out)
            if c == "\\":
                self.expect(self.pos < len(data), "unexpected end of file")
                c = data[self.pos]
                self.pos += 1
                if c in _ESCAPES:
                    c = _ESCAPES[c]
                elif c in "xX":
                    c = self._numeric_escape(16, 2)
                elif c in "01234567":
                    self.pos -= 1
                    c = self._numeric_escape(8, 3)
            out.append(c)
            if c == "\n":
                self._newline()
        raise self.fail("unterminated string")

    def _numeric_escape(self, radix: int, length: int) -> str:
        value, end = -1, min(self.pos + length, len(self.data))
        while self.pos < end:
            try:
                digit = int(self.data[self.pos], 16)
            except ValueError:
                break
            if digit >= radix:
                break
            value = digit if value < 0 else value * radix + digit
            self.pos += 1
        self.expect(value >= 0, "expected a digit after \\x or \\X")
        return chr(value)

    def string(self) -> str:
        return self.quoted() if self.peek() in "\"'" else self.word()

    def data_type(self, first: Optional[str] = None) -> str:
        name = self.word() if first is None else first
        if name == "map":
            self.expect(self.read() == "<", "expected '<'")
            key = self.data_type()
            self.expect(self.read() == ",", "expected ','")
            value = self.data_type()
            self.expect(self.read() == ">", "expected '>'")
            return f"map<{key}, {value}>"
        parts = [name]
        while self.peek() == ".":
            self.pos += 1
            parts.append(self.word())
        return ".".join(parts)


class _Options:
    """Option syntax: ``name = value``, ``(ext).sub = value``, ``[a = 1, b = 2]`` lists and
    text-format aggregates ``{ key: value ... }``."""

    def __init__(self, cursor: _Cursor):
        self.c = cursor

    def bracketed(self) -> list[Option]:
        c = self.c
        if not c.take("["):
            return []
        out = []
        while True:
            out.append(self.option("="))
            if c.take("]"):
                return out
            c.expect(c.take(","), "Expected ',' or ']")

    def option(self, separator: str) -> Option:
        c = self.c
        extension = c.peek() == "["
        parenthesized = c.peek() == "("
        name = c.name()
        if extension:
            name = f"[{name}]"
        sub_names: list[str] = []
        while True:
            ch = c.read()
            if ch != ".":
                break
            sub = c.name(keep_wrap=True)
            sub_names.extend([sub] if sub.startswith("(") else sub.split("."))
        if separator == ":" and ch == "{":
            c.pos -= 1
        else:
            c.expect(ch == separator, f"expected '{separator}' in option")
        kind, value = self.value()
        for sub in reversed(sub_names):
            wrapped = sub.startswith("(")
            value = Option(sub[1:-1] if wrapped else sub, kind, value, wrapped)
            kind = OPTION
        return Option(name, kind, value, parenthesized)

    def value(self) -> tuple[str, Any]:
        c = self.c
        ch = c.peek()
        if ch == "{":
            return MAP, self._map()
        if ch == "[":
            return LIST, self._list()
        if ch in "\"'":
            return STRING, c.string()
        if ch.isdigit() or ch == "-":
            return NUMBER, c.word()
        word = c.word()
        return (BOOLEAN, word) if word in ("true", "false") else (ENUM, word)

    @staticmethod
    def _wrap(kind: str, value: Any) -> Any:
        return Primitive(kind, value) if kind in (BOOLEAN, ENUM, NUMBER) else value

    def _map(self) -> dict:
        c = self.c
        c.read()
        out: dict = {}
        while True:
            if c.take("}"):
                return out
            option = self.option(":")
            value = self._wrap(option.kind, option.value)
            if isinstance(value, Option):
                out.setdefault(option.name, {})[value.name] = value.value
            elif option.name not in out:
                out[option.name] = value
            else:
                previous = out[option.name]
                merged = previous if isinstance(previous, list) else [previous]
                merged.extend(value if isinstance(value, list) else [value])
                out[option.name] = merged
            if not c.take(","):
                c.take(";")

    def _list(self) -> list:
        c = self.c
        c.require("[")
        out: list = []
        while True:
            if c.take("]"):
                return out
            kind, value = self.value()
            out.append(self._wrap(kind, value))
            if c.take(","):
                continue
            c.expect(c.peek() == "]", "expected ',' or ']'")


class _Parser:
    def __init__(self, text: str):
        self.c = _Cursor(text)
        self.options = _Options(self.c)
        self.file = ProtoFile()
        self.count = 0

    def parse(self) -> ProtoFile:
        c, f = self.c, self.file
        while True:
            c.skip_documentation()
            if c.exhausted():
                return f
            item = self.declaration(_FILE)
            if isinstance(item, (Message, Enum)):
                self._unique(item, f.types)
                f.types.append(item)
            elif isinstance(item, Service):
                self._unique(item, f.services)
                f.services.append(item)
            elif isinstance(item, Option):
                f.options.append(item)
            elif isinstance(item, Extend):
                f.extends.append(item)

    @staticmethod
    def _unique(item, existing) -> None:
        for other in existing:
            if other.name == item.name:
                where = getattr(item, "_where", (0, 0))
                first = getattr(other, "_where", (0, 0))
                raise ProtoSyntaxError(f"{item.name} (:{where[0]}:{where[1]}) is already "
                                       f"defined at :{first[0]}:{first[1]}")

    def declaration(self, context: int):
        c = self.c
        index = self.count
        self.count += 1
        if c.take(";"):
            return None
        where = c.where()
        label = c.word(leading_digit=context != _ENUM)
        if label == "package" and context == _FILE:
            self.file.package = c.name()
            c.require(";")
            return None
        if label == "import" and context == _FILE:
            if c.peek() in "\"'":
                self.file.imports.append(c.quoted())
            else:
                kind = c.string()
                if kind == "weak":
                    self.file.weak_imports.append(c.quoted())
                elif kind == "public":
                    self.file.public_imports.append(c.quoted())
                else:
                    raise c.fail("expected quoted string", where)
            c.require(";")
            return None
        if label == "syntax" and context == _FILE:
            c.expect(self.file.syntax is None, "too many syntax definitions", where)
            c.require("=")
            c.expect(index == 0, "'syntax' element must be the first declaration in a file",
                     where)
            syntax = c.quoted()
            if syntax not in (PROTO2, PROTO3):
                raise c.fail(f"unexpected syntax: {syntax}", where)
            self.file.syntax = syntax
            c.require(";")
            return None
        if label == "option":
            option = self.options.option("=")
            c.require(";")
            return option
        if label == "reserved":
            return self.reserved(where)
        if label == "message" and context in (_FILE, _MESSAGE):
            return self.message(where)
        if label == "enum" and context in (_FILE, _MESSAGE):
            return self.enum(where)
        if label == "service" and context == _FILE:
            return self.service(where)
        if label == "extend" and context in (_FILE, _MESSAGE):
            return self.extend()
        if label == "rpc" and context == _SERVICE:
            return self.rpc(where)
        if label == "oneof" and context == _MESSAGE:
            return self.oneof()
        if label == "extensions" and context == _MESSAGE:
            return self.extensions(where)
        if context in (_MESSAGE, _EXTEND):
            return self.labelled_field(label, where)
        if context == _ENUM:
            return self.enum_constant(label)
        if label == "edition" and context == _FILE:
            raise c.fail("edition is not currently supported")
        raise c.fail(f"unexpected label: {label}", where)

    def _body(self, context: int):
        """The declarations between ``{`` and ``}``."""
        c = self.c
        c.require("{")
        while True:
            c.skip_documentation()
            if c.take("}"):
                return
            item = self.declaration(context)
            if item is not None:
                yield item

    def message(self, where) -> Message:
        m = Message(self.c.name())
        m._where = where
        for item in self._body(_MESSAGE):
            if isinstance(item, Field):
                m.fields.append(item)
            elif isinstance(item, OneOf):
                m.oneofs.append(item)
            elif isinstance(item, Group):
                m.groups.append(item)
            elif isinstance(item, (Message, Enum)):
                m.nested.append(item)
            elif isinstance(item, Extensions):
                m.extensions.append(item)
            elif isinstance(item, Option):
                m.options.append(item)
            elif isinstance(item, Extend):
                m.extends.append(item)
            elif isinstance(item, Reserved):
                m.reserveds.append(item)
        return m

    def extend(self) -> Extend:
        e = Extend(self.c.name())
        e.fields = [item for item in self._body(_EXTEND) if isinstance(item, Field)]
        return e

    def service(self, where) -> Service:
        s = Service(self.c.name())
        s._where = where
        for item in self._body(_SERVICE):
            if isinstance(item, Rpc):
                s.rpcs.append(item)
            elif isinstance(item, Option):
                s.options.append(item)
        return s

    def enum(self, where) -> Enum:
        e = Enum(self.c.name())
        e._where = where
        for item in self._body(_ENUM):
            if isinstance(item, EnumConstant):
                e.constants.append(item)
            elif isinstance(item, Option):
                e.options.append(item)
            elif isinstance(item, Reserved):
                e.reserveds.append(item)
        return e

    def labelled_field(self, word: str, where):
        c = self.c
        if word == "required":
            c.expect(self.file.syntax != PROTO3,
                     "'required' label forbidden in proto3 field declarations", where)
            label, type_ = "required", c.data_type()
        elif word in ("optional", "repeated"):
            label, type_ = word, c.data_type()
        else:
            c.expect(self.file.syntax == PROTO3 or (word == "map" and c.peek() == "<"),
                     f"unexpected label: {word}", where)
            label, type_ = None, c.data_type(word)
        c.expect(not type_.startswith("map<") or label is None, "'map' type cannot have label",
                 where)
        if type_ == "group":
            return self.group(label)
        return self.field(label, type_)

    def field(self, label: Optional[str], type_: str) -> Field:
        c = self.c
        name = c.name() if c.peek() in "([" else c.word(leading_digit=False)
        c.require("=")
        tag = c.integer()
        options = self.options.bracketed()
        default = _strip(options, "default")
        json_name = _strip(options, "json_name")
        c.require(";")
        c.skip_trailing_comment()
        return Field(name, type_, tag, label, default, json_name, options)

    def oneof(self) -> OneOf:
        c = self.c
        o = OneOf(c.name())
        c.require("{")
        while True:
            c.skip_documentation()
            if c.take("}"):
                return o
            type_ = c.data_type()
            if type_ == "group":
                o.groups.append(self.group(None))
            elif type_ == "option":
                o.options.append(self.options.option("="))
                c.require(";")
            else:
                o.fields.append(self.field(None, type_))

    def group(self, label: Optional[str]) -> Group:
        c = self.c
        g = Group(c.word(), 0, label)
        c.require("=")
        g.tag = c.integer()
        c.require("{")
        while True:
            c.skip_documentation()
            if c.take("}"):
                return g
            where = c.where()
            item = self.labelled_field(c.word(), where)
            if not isinstance(item, Field):
                raise c.fail(f"expected field declaration, was {item}")
            g.fields.append(item)

    def _range_end(self, where, message: str) -> int:
        c = self.c
        c.expect(c.word() == "to", message, where)
        end = c.word()
        if end == "max":
            return MAX_TAG
        try:
            return int(end)
        except ValueError:
            raise ProtoSyntaxError(f"For input string: \"{end}\"") from None

    def reserved(self, where) -> Reserved:
        c = self.c
        values: list = []
        while True:
            if c.peek() in "\"'":
                values.append(c.quoted())
            else:
                start = c.integer()
                if c.peek() in ",;":
                    values.append(start)
                else:
                    values.append(Range(start, self._range_end(
                        where, "expected ',', ';', or 'to'")))
            ch = c.read()
            if ch == ";":
                break
            if ch != ",":
                raise c.fail("expected ',' or ';'")
        c.skip_trailing_comment()
        return Reserved(values)

    def extensions(self, where) -> Extensions:
        c = self.c
        e = Extensions([])
        while True:
            start = c.integer()
            if c.peek() in ",;[":
                e.values.append(start)
            else:
                e.values.append(Range(start, self._range_end(
                    where, "expected ',', ';', '[' or 'to'")))
            if c.peek() == "[":
                e.options.extend(self.options.bracketed())
                c.require(";")
                return e
            ch = c.read()
            if ch == ";":
                return e
            if ch != ",":
                raise c.fail("expected ',' or ';'")

    def enum_constant(self, name: str) -> EnumConstant:
        c = self.c
        c.require("=")
        tag = c.integer()
        options = self.options.bracketed()
        c.require(";")
        c.skip_trailing_comment()
        return EnumConstant(name, tag, options)

    def rpc(self, where) -> Rpc:
        c = self.c
        r = Rpc(c.name(), "", "")
        for side in ("request", "response"):
            if side == "response":
                c.expect(c.word() == "returns", "expected 'returns'", where)
            c.require("(")
            word = c.word()
            streaming = word == "stream"
            type_ = c.data_type() if streaming else c.data_type(word)
            c.require(")")
            setattr(r, side, type_)
            setattr(r, side + "_streaming", streaming)
        if c.take("{"):
            while True:
                c.skip_documentation()
                if c.take("}"):
                    break
                item = self.declaration(_RPC)
                if isinstance(item, Option):
                    r.options.append(item)
        else:
            c.require(";")
        return r


def _strip(options: list[Option], name: str) -> Optional[str]:
    """Remove the options called ``name`` (not real options: ``default``, ``json_name``) and
    return the last one's value."""
    found = None
    for option in [o for o in options if o.name == name]:
        options.remove(option)
        found = str(option.value)
    return found


def parse_text(text: str) -> ProtoFile:
    """Parse ``.proto`` text; raises :class:`ProtoSyntaxError` with Wire's message."""
    return _Parser(text).parse()
