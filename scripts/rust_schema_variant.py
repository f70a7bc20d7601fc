#!/usr/bin/env python3
"""Writes the Rust-codegen variant of schemas/ into an output directory.

flatc's Rust generator only accepts tables as union members, but the wire format has
one union of structs: `TensorValue` in tensor_attributes.fbs. For Rust codegen we keep
the wire layout and change only how it is declared:

  * the union becomes `enum TensorValueType : ubyte` with the same tags, so the
    discriminant field `value_type` is generated as usual;
  * the union's value field becomes a `(deprecated)` placeholder, which keeps its
    vtable slot (slot numbers are the wire format) but generates no accessor.

flatbuffers-sdk/src/tensor_value.rs reads, verifies and writes that slot by hand.
Every other file is copied unchanged.
"""
import pathlib
import re
import sys


def patch_tensor_attributes(text: str) -> str:
    union = re.search(r"union\s+TensorValue\s*\{(?P<body>[^}]*)\}", text)
    if union is None:
        sys.exit("rust_schema_variant: `union TensorValue` not found in tensor_attributes.fbs")
    members = [m.strip() for m in union.group("body").split(",")]
    members = [re.sub(r"//.*", "", m).strip() for m in members]
    members = [m for m in members if m]
    lines = ["enum TensorValueType : ubyte {", "  NONE = 0,"]
    for tag, member in enumerate(members, start=1):
        name = member.split("=")[0].strip()
        lines.append(f"  {name} = {tag},")
    lines.append("}")
    text = text[: union.start()] + "\n".join(lines) + text[union.end():]
    field = re.compile(r"^(\s*)value\s*:\s*TensorValue\s*;", re.MULTILINE)
    if not field.search(text):
        sys.exit("rust_schema_variant: field `value: TensorValue;` not found")
    text = field.sub(
        r"\1value_type: TensorValueType;\n\1value: uint (deprecated);", text, count=1
    )
    return text


ENTRY = "all_schemas.fbs"


def main() -> None:
    src, dst = map(pathlib.Path, sys.argv[1:3])
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("*.fbs")):
        text = path.read_text()
        if path.name == "tensor_attributes.fbs":
            text = patch_tensor_attributes(text)
        (dst / path.name).write_text(text)
    # One entry file, so that a single flatc run (with --gen-all) emits one module tree.
    includes = "".join(f'include "{p.name}";\n' for p in sorted(src.glob("*.fbs")))
    (dst / ENTRY).write_text(includes)


if __name__ == "__main__":
    main()
