"""Parquet files of every type pyarrow writes, for the default suite (packages/driver/test/ParquetTypes.test.ts)
and `pnpm test:formats-compat`, and pyarrow's reading of Parquet files Kindling wrote. Values are printed in their
canonical form (scripts/compat/canonical.ts makes the same of Kindling's records): a row per line, JSON, keys
sorted; null; booleans and strings as they are; an integer as {"int": digits}; any other number as
{"float": its IEEE-754 bits in hex} ("nan" for NaN); bytes as {"bytes": hex}; a date or timestamp as {"ms":
milliseconds since the epoch, floored}; a decimal as its text at its scale; lists as arrays; structs and maps as
objects (a map's keys as text). Where Kindling's value of a type is of another kind, the canonical form is
Kindling's: an unsigned 64-bit integer is a decimal(20,0), so text; a UUID its text; a JSON value its text.

    parquet_types.py write DIR     # the fixtures: each writer's settings a file, with its rows (.jsonl) beside it
    parquet_types.py read PATH     # a Parquet file or directory, its rows in canonical form (sorted by "id")
    parquet_types.py rewrite PATH OUT   # the rows of PATH written again by pyarrow, as OUT/rows.parquet
"""
import decimal
import json
import math
import os
import random
import struct
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 160
# Decimals of 38 digits and more are exact only with room for them.
decimal.getcontext().prec = 100
MS = {"s": 1 / 1000, "ms": 1, "us": 1000, "ns": 1_000_000}


def plain(t):
    """A type whose Python values are exact (timestamps and durations as their counts, dates as days or ms)."""
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date64(t):
        return pa.int64()
    if pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_dictionary(t):
        return plain(t.value_type)
    if isinstance(t, pa.BaseExtensionType):
        return plain(t.storage_type)
    if pa.types.is_string_view(t) or pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_binary_view(t) or pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_map(t):
        return pa.map_(plain(t.key_type), plain(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or \
            pa.types.is_list_view(t):
        return pa.list_(plain(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, plain(f.type)) for f in t])
    return t


def number(value):
    if isinstance(value, int):
        return {"int": str(value)}
    if math.isnan(value):
        return {"float": "nan"}
    if value.is_integer() and not (value == 0 and math.copysign(1, value) < 0):
        return {"int": str(int(value))}
    return {"float": struct.pack(">d", value).hex()}


def canonical(value, t):
    """A value of arrow type `t` (its Python value as `plain(t)` has it) in canonical form."""
    if value is None:
        return None
    if pa.types.is_dictionary(t):
        return canonical(value, t.value_type)
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name == "arrow.uuid":
            return str(uuid.UUID(bytes=value))
        return canonical(value, t.storage_type)
    if pa.types.is_timestamp(t):
        return {"ms": str(value * 1000 if t.unit == "s" else value // MS[t.unit])}
    if pa.types.is_date32(t):
        return {"ms": str(value * 86_400_000)}
    if pa.types.is_date64(t):
        return {"ms": str(value)}
    if pa.types.is_uint64(t):
        return str(value)
    if pa.types.is_decimal(t):
        return format(value, "f")
    if pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_large_string(t) or \
            pa.types.is_string_view(t):
        return value
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, (int, float)):
        return number(value)
    if pa.types.is_map(t):
        return {str(k): canonical(v, t.item_type) for k, v in value}
    if pa.types.is_struct(t):
        return {f.name: canonical(value[f.name], f.type) for f in t}
    if isinstance(value, list):
        return [canonical(item, t.value_type) for item in value]
    raise ValueError(f"no canonical form for {t}: {value!r}")


def canonical_rows(table):
    """The rows of a table in canonical form, in the order of their ids."""
    columns = {}
    for field in table.schema:
        values = table.column(field.name).combine_chunks()
        if pa.types.is_dictionary(field.type):
            values = values.dictionary_decode()
        if isinstance(field.type, pa.BaseExtensionType):
            values = values.storage
        columns[field.name] = [canonical(v, field.type) for v in values.cast(plain(values.type)).to_pylist()]
    rows = [{name: columns[name][i] for name in columns} for i in range(table.num_rows)]
    rows.sort(key=lambda row: int(row["id"]["int"]))
    return [json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for row in rows]


def every_type(rng):
    """A table of every type pyarrow writes to Parquet and Kindling reads, with each type's edge values."""
    n = ROWS

    def column(values, t, nulls=True):
        return pa.array([None if nulls and i % 11 == 5 else v for i, v in enumerate(values)], t)

    def pick(edges, make):
        return [edges[i] if i < len(edges) else make() for i in range(n)]

    def ints(bits, signed):
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
        return pick([low, high, 0, -1 if signed else 1, low + 1, high - 1], lambda: rng.randint(low, high))

    def floats(single):
        edges = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.5, -2.25, 5e-324 if not single else 1e-45,
                 1.7976931348623157e308 if not single else 3.4028234663852886e38]
        make = (lambda: struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]) if single else \
            (lambda: rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300))
        return pick(edges, make)

    def texts():
        pieces = ["a", "é", "😀", "\"", ",", "\n", " ", "中", "\\", "\t"]
        return pick(["", "plain"], lambda: "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))))

    def blobs(size=None):
        # Bytes of every value, invalid UTF-8 among them (as bytes >= 0x80 alone are).
        edges = [b"\x00\x80\xff", b"\xc3\x28", b"", b"plain"] if size is None else [b"\x00" * size, b"\xff" * size]
        return pick(edges, lambda: bytes(rng.randrange(256) for _ in range(size or rng.randint(0, 12))))

    def decimals(precision, scale):
        digits = 10 ** precision - 1
        edges = [digits, -digits, 0, 1, -1]
        return pick([decimal.Decimal(v).scaleb(-scale) for v in edges],
                    lambda: decimal.Decimal(rng.randint(-digits, digits)).scaleb(-scale))

    # Around the epoch too: a negative count with a part finer than a millisecond is floored, not cut toward zero.
    def counts(unit):
        per_second = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
        low, high = -4_000_000_000 * per_second, 4_000_000_000 * per_second
        if unit == "ns":
            low, high = -(2 ** 63) + 1, 2 ** 63 - 1
        return pick([0, -1, 1, -1500 if unit != "s" else -2, low, high], lambda: rng.randint(low, high))

    days = pick([0, -1, 1, -719162, 2932896], lambda: rng.randint(-100_000, 100_000))
    half_bits = pick([0x3c00, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x7bff], lambda: rng.randrange(0x7c00))
    ids = list(range(n))
    rng.shuffle(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "int8": column(ints(8, True), pa.int8()),
        "int16": column(ints(16, True), pa.int16()),
        "int32": column(ints(32, True), pa.int32()),
        "int64": column(ints(64, True), pa.int64()),
        "uint8": column(ints(8, False), pa.uint8()),
        "uint16": column(ints(16, False), pa.uint16()),
        "uint32": column(ints(32, False), pa.uint32()),
        "uint64": column(ints(64, False), pa.uint64()),
        "float16": pa.array([None if i % 11 == 5 else b for i, b in enumerate(half_bits)], pa.uint16())
        .view(pa.float16()),
        "float32": column(floats(True), pa.float32()),
        "float64": column(floats(False), pa.float64()),
        "boolean": column([rng.random() < 0.5 for _ in range(n)], pa.bool_()),
        "string": column(texts(), pa.string()),
        "large_string": column(texts(), pa.large_string()),
        "string_view": column(texts(), pa.string_view()),
        "binary": column(blobs(), pa.binary()),
        "large_binary": column(blobs(), pa.large_binary()),
        "binary_view": column(blobs(), pa.binary_view()),
        "fixed_size_binary": column(blobs(4), pa.binary(4)),
        "decimal32": column(decimals(7, 2), pa.decimal32(7, 2)),
        "decimal64": column(decimals(15, 3), pa.decimal64(15, 3)),
        "decimal128_small": column(decimals(9, 4), pa.decimal128(9, 4)),
        "decimal128_long": column(decimals(18, 0), pa.decimal128(18, 0)),
        "decimal128": column(decimals(38, 10), pa.decimal128(38, 10)),
        "decimal256": column(decimals(38, 38), pa.decimal256(38, 38)),
        "date32": column(days, pa.date32()),
        "date64": column([d * 86_400_000 for d in days], pa.date64()),
        **{f"timestamp_{unit}": column(counts(unit), pa.timestamp(unit)) for unit in ["s", "ms", "us", "ns"]},
        **{f"timestamp_{unit}_utc": column(counts(unit), pa.timestamp(unit, "UTC")) for unit in ["ms", "ns"]},
        "timestamp_us_zoned": column(counts("us"), pa.timestamp("us", "America/New_York")),
        "duration_s": column(counts("s"), pa.duration("s")),
        "duration_ns": column(counts("ns"), pa.duration("ns")),
        "nothing": pa.nulls(n),
        "dictionary_string": column(pick([], lambda: rng.choice(["red", "green", "blué"])),
                                    pa.dictionary(pa.int8(), pa.string())),
        "dictionary_binary": column(pick([], lambda: rng.choice([b"\x80", b"\xff\xfe", b""])),
                                    pa.dictionary(pa.int32(), pa.binary())),
        "uuid": column(blobs(16), pa.uuid()),
        "json": column(pick(["{}", "[1,2]"], lambda: json.dumps({"k": rng.randint(0, 9)})), pa.json_()),
        "list_int32": column(pick([[], [None]], lambda: [rng.randint(-5, 5) for _ in range(rng.randint(0, 4))]),
                             pa.list_(pa.int32())),
        "large_list_string": column(pick([[""]], lambda: [rng.choice(["x", "é", "😀"]) for _ in range(2)]),
                                    pa.large_list(pa.string())),
        "fixed_size_list_double": column(pick([], lambda: [rng.uniform(-1, 1), -0.0]), pa.list_(pa.float64(), 2)),
        "list_binary": column(pick([[b"\x80"], [None, b""]], lambda: [b"\xff\x00"]), pa.list_(pa.binary())),
        "list_decimal": column(pick([], lambda: [decimal.Decimal(rng.randint(-10 ** 20, 10 ** 20)).scaleb(-5)]),
                               pa.list_(pa.decimal128(25, 5))),
        "list_list_int64": column(pick([[[]], [[2 ** 63 - 1], None]], lambda: [[rng.randint(-9, 9)]]),
                                  pa.list_(pa.list_(pa.int64()))),
        "list_timestamp_ns": column(pick([[-1500]], lambda: [rng.randint(-2 ** 62, 2 ** 62)]),
                                    pa.list_(pa.timestamp("ns"))),
        "struct": column(pick([], lambda: {"a": rng.randint(0, 9), "b": b"\x80" * rng.randint(0, 2),
                                           "c": decimal.Decimal(rng.randint(-999, 999)).scaleb(-2),
                                           "d": None if rng.random() < 0.3 else rng.randint(-10 ** 15, 10 ** 15),
                                           "e": rng.randint(0, 2 ** 32 - 1)}),
                         pa.struct([("a", pa.int32()), ("b", pa.binary()), ("c", pa.decimal128(5, 2)),
                                    ("d", pa.timestamp("us", "UTC")), ("e", pa.uint32())])),
        "map_string_int64": column(pick([[]], lambda: [(f"k{i}", rng.randint(-9, 9)) for i in range(2)]),
                                   pa.map_(pa.string(), pa.int64())),
        "map_int32_binary": column(pick([], lambda: [(rng.randint(0, 9), b"\xfe")]), pa.map_(pa.int32(), pa.binary())),
        "list_struct": column(pick([], lambda: [{"x": rng.random() < 0.5, "y": "é"}]),
                              pa.list_(pa.struct([("x", pa.bool_()), ("y", pa.string())]))),
    })


# Writers' settings: dictionary pages or plain ones, data pages v1 or v2, the delta and byte-stream-split
# encodings, every codec Kindling reads, decimals as integers, and the legacy forms (Parquet 1.0's converted
# types, INT96 timestamps). Small pages and row groups, so that columns cross pages and files hold several groups.
def variants(table):
    flat = [f.name for f in table.schema if not pa.types.is_nested(f.type) and f.name != "nothing"]
    by_type = lambda test: [name for name in flat if test(table.schema.field(name).type)]
    delta_ints = by_type(lambda t: (pa.types.is_integer(t) and not pa.types.is_uint64(t)) or pa.types.is_date32(t))
    delta_strings = by_type(lambda t: pa.types.is_string(t) or pa.types.is_large_string(t))
    delta_bytes = by_type(lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t))
    split = by_type(lambda t: pa.types.is_float32(t) or pa.types.is_float64(t))
    common = {"row_group_size": 64, "data_page_size": 512}
    return {
        "dictionary-v1-snappy": {**common, "compression": "snappy"},
        "plain-v2-zstd": {**common, "compression": "zstd", "use_dictionary": False, "data_page_version": "2.0"},
        "delta-gzip": {**common, "compression": "gzip", "use_dictionary": False, "column_encoding": {
            **{name: "DELTA_BINARY_PACKED" for name in delta_ints},
            **{name: "DELTA_LENGTH_BYTE_ARRAY" for name in delta_strings},
            **{name: "DELTA_BYTE_ARRAY" for name in delta_bytes},
            **{name: "BYTE_STREAM_SPLIT" for name in split}}},
        "decimals-as-integers-brotli": {**common, "compression": "brotli", "store_decimal_as_integer": True},
        "legacy-int96-lz4": {**common, "compression": "lz4", "version": "1.0", "use_deprecated_int96_timestamps": True},
    }


# Types Kindling does not read, each alone in a file beside a column it does: Parquet's TIME (which Spark refuses
# too) and decimals of more than 38 digits (Spark's limit, and Kindling's).
def refused():
    ids = pa.array([1, 2], pa.int64())
    return {
        "time32": pa.table({"id": ids, "at": pa.array([1000, None], pa.time32("ms"))}),
        "time64": pa.table({"id": ids, "at": pa.array([1, None], pa.time64("ns"))}),
        "decimal256": pa.table({"id": ids, "amount": pa.array([decimal.Decimal("1.5"), None], pa.decimal256(50, 3))}),
        "nested-time": pa.table({"id": ids, "times": pa.array([[1], None], pa.list_(pa.time64("us")))}),
    }


def write(out):
    rng = random.Random(42)
    table = every_type(rng)
    os.makedirs(out, exist_ok=True)
    rows = canonical_rows(table)
    for name, options in variants(table).items():
        path = os.path.join(out, f"{name}.parquet")
        pq.write_table(table, path, **options)
        # Every file holds the same rows, as pyarrow reads them back, whatever its settings.
        if canonical_rows(pq.read_table(path)) != rows:
            raise ValueError(f"pyarrow reads {path} as other rows than it wrote")
    with open(os.path.join(out, "rows.jsonl"), "w", encoding="utf8") as lines:
        lines.write("\n".join(rows) + "\n")
    os.makedirs(os.path.join(out, "refused"), exist_ok=True)
    for name, refused_table in refused().items():
        pq.write_table(refused_table, os.path.join(out, "refused", f"{name}.parquet"))


def read(path):
    print("\n".join(canonical_rows(pq.read_table(path))))


def rewrite(path, out):
    os.makedirs(out, exist_ok=True)
    pq.write_table(pq.read_table(path), os.path.join(out, "rows.parquet"))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"write": write, "read": read, "rewrite": rewrite}[command](*args)
