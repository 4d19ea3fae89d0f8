"""A small reader of class files (JVMS chapter 4) for the agent's tests: the constant pool's tags
and UTF-8 strings, and the bytecode length of each method."""

from __future__ import annotations

import struct

# Constant-pool tags (JVMS 4.4) and the size of each entry after its tag byte; UTF-8 is sized by
# its length field, long and double take two slots.
UTF8, LONG, DOUBLE, INVOKE_DYNAMIC = 1, 5, 6, 18
FIXED_SIZE = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4,
              19: 2, 20: 2}


def _u2(data: bytes, at: int) -> int:
    return struct.unpack_from(">H", data, at)[0]


def _u4(data: bytes, at: int) -> int:
    return struct.unpack_from(">I", data, at)[0]


def constant_pool(class_file: bytes) -> tuple[list[int], dict[int, str], int]:
    """The tag of every entry, the UTF-8 entries by index, and the offset just after the pool."""
    assert class_file[:4] == b"\xca\xfe\xba\xbe", "not a class file"
    count = _u2(class_file, 8)
    tags: list[int] = []
    utf8: dict[int, str] = {}
    pos, index = 10, 1
    while index < count:
        tag = class_file[pos]
        tags.append(tag)
        if tag == UTF8:
            length = _u2(class_file, pos + 1)
            utf8[index] = class_file[pos + 3:pos + 3 + length].decode("utf-8", "replace")
            pos += 3 + length
        else:
            pos += 1 + FIXED_SIZE[tag]
        index += 2 if tag in (LONG, DOUBLE) else 1
    return tags, utf8, pos


def code_lengths(class_file: bytes) -> dict[str, int]:
    """Method name -> length of its Code attribute's bytecode (JVMS 4.1, 4.7.3; the longest of
    same-named overloads)."""
    _tags, utf8, pos = constant_pool(class_file)
    pos += 6                                                     # access, this, super
    pos += 2 + 2 * _u2(class_file, pos)                          # interfaces
    for member in ("fields", "methods"):
        lengths: dict[str, int] = {}
        members, pos = _u2(class_file, pos), pos + 2
        for _ in range(members):
            name = utf8[_u2(class_file, pos + 2)]
            attributes, pos = _u2(class_file, pos + 6), pos + 8
            for _ in range(attributes):
                if utf8[_u2(class_file, pos)] == "Code":
                    lengths[name] = max(lengths.get(name, 0), _u4(class_file, pos + 10))
                pos += 6 + _u4(class_file, pos + 2)
        if member == "methods":
            return lengths
    return {}
