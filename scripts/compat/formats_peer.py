"""The other tools' side of `pnpm test:formats-compat`: pyarrow and Spark reading files Kindling wrote, and
writing the rows of a canonical file for Kindling to read. A row's canonical form (as formats-app.ts prints it):
integers and decimals as text, a double by its IEEE bits, a timestamp in microseconds since the epoch, a date
as yyyy-MM-dd; keys sorted.

    formats_peer.py pyarrow-read parquet|csv|json PATH
    formats_peer.py spark-read parquet|csv|json PATH
    formats_peer.py pyarrow-write ROWS DIR        # parquet (snappy, gzip, zstd) and CSV
    formats_peer.py pyarrow-write-nested DIR      # a fixture of nested columns (lists, a struct, a map)
    formats_peer.py spark-write ROWS DIR          # parquet, CSV and JSON lines
"""
import datetime
import decimal
import json
import os
import struct
import sys

os.environ["TZ"] = "UTC"
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
FIELDS = "id LONG, name STRING, count INT, score DOUBLE, ok BOOLEAN, price DECIMAL(20,4), day DATE, at TIMESTAMP"


def canonical(row):
    at = row["at"]
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=datetime.timezone.utc)
    price = row["price"]
    return json.dumps({
        "at": None if at is None else str((at - EPOCH) // datetime.timedelta(microseconds=1)),
        "count": row["count"],
        "day": None if row["day"] is None else row["day"].isoformat(),
        "id": str(row["id"]),
        "name": row["name"],
        "ok": row["ok"],
        "price": None if price is None else str(decimal.Decimal(price).quantize(decimal.Decimal("0.0001"))),
        "score": None if row["score"] is None else struct.pack(">d", row["score"]).hex(),
    }, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def print_rows(rows):
    for row in sorted(rows, key=lambda r: r["id"]):
        print(canonical(row))


def from_canonical(path):
    rows = []
    with open(path, encoding="utf8") as lines:
        for line in lines:
            c = json.loads(line)
            rows.append({
                "id": int(c["id"]),
                "name": c["name"],
                "count": c["count"],
                "score": None if c["score"] is None else struct.unpack(">d", bytes.fromhex(c["score"]))[0],
                "ok": c["ok"],
                "price": None if c["price"] is None else decimal.Decimal(c["price"]),
                "day": None if c["day"] is None else datetime.date.fromisoformat(c["day"]),
                "at": None if c["at"] is None else EPOCH + datetime.timedelta(microseconds=int(c["at"])),
            })
    return rows


def arrow_schema():
    import pyarrow as pa
    return pa.schema([
        ("id", pa.int64()), ("name", pa.string()), ("count", pa.int32()), ("score", pa.float64()),
        ("ok", pa.bool_()), ("price", pa.decimal128(20, 4)), ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
    ])


def pyarrow_read(form, path):
    import pyarrow.csv as pc
    import pyarrow.dataset as ds
    import pyarrow.json as pj
    schema = arrow_schema()
    if form == "parquet":
        table = ds.dataset(path, format="parquet").to_table()
    elif form == "csv":
        options = ds.CsvFileFormat(convert_options=pc.ConvertOptions(
            column_types=schema, strings_can_be_null=True, quoted_strings_can_be_null=False))
        table = ds.dataset(path, format=options).to_table()
    else:
        # Arrow's JSON reader makes dates of numbers of days only: a date written as text is read as text.
        import pyarrow as pa
        text_dates = schema.set(schema.get_field_index("day"), pa.field("day", pa.string()))
        files = sorted(f for f in os.listdir(path) if not f.startswith(("_", ".")))
        table = pa.concat_tables(
            pj.read_json(os.path.join(path, f), parse_options=pj.ParseOptions(explicit_schema=text_dates))
            for f in files)
        rows = table.to_pylist()
        for row in rows:
            row["day"] = None if row["day"] is None else datetime.date.fromisoformat(row["day"])
        return print_rows(rows)
    print_rows(table.to_pylist())


def spark():
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master("local[2]").appName("formats-compat")
            .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false").getOrCreate())


def spark_read(form, path):
    session = spark()
    reader = session.read.schema(FIELDS)
    if form == "parquet":
        frame = session.read.parquet(path)
    elif form == "csv":
        frame = reader.option("header", True).option("escape", '"').option("mode", "FAILFAST").csv(path)
    else:
        frame = reader.option("mode", "FAILFAST").json(path)
    print_rows([row.asDict() for row in frame.collect()])
    session.stop()


def pyarrow_write(rows_path, out):
    import pyarrow as pa
    import pyarrow.csv as pc
    import pyarrow.parquet as pq
    table = pa.Table.from_pylist(from_canonical(rows_path), schema=arrow_schema())
    for codec in ["snappy", "gzip", "zstd"]:
        os.makedirs(os.path.join(out, f"parquet-{codec}"), exist_ok=True)
        pq.write_table(table, os.path.join(out, f"parquet-{codec}", "rows.parquet"), compression=codec,
                       row_group_size=40)
    os.makedirs(os.path.join(out, "csv"), exist_ok=True)
    pc.write_csv(table, os.path.join(out, "csv", "rows.csv"))


def pyarrow_write_nested(out):
    """Nested columns for the default suite's fixture: lists, a struct, a map, each null in some row."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "tags": pa.array([["a", "b"], [], None, ["c"]], pa.list_(pa.string())),
        "scores": pa.array([[1, 2, 3], [4], [None, 5], None], pa.list_(pa.int32())),
        "point": pa.array([{"x": 1.5, "y": "up"}, None, {"x": -2.0, "y": None}, {"x": 0.0, "y": "down"}],
                          pa.struct([("x", pa.float64()), ("y", pa.string())])),
        "counts": pa.array([[("k1", 1), ("k2", 2)], [], None, [("z", 26)]], pa.map_(pa.string(), pa.int32())),
    })
    os.makedirs(out, exist_ok=True)
    pq.write_table(table, os.path.join(out, "nested.parquet"), compression="snappy")


def spark_write(rows_path, out):
    session = spark()
    frame = session.createDataFrame(from_canonical(rows_path), FIELDS.replace(" LONG", " BIGINT")).repartition(3)
    frame.write.parquet(os.path.join(out, "parquet"))
    # Values as they are: Spark's writer trims their spaces unless told not to.
    (frame.write.option("header", True).option("ignoreLeadingWhiteSpace", False)
     .option("ignoreTrailingWhiteSpace", False).csv(os.path.join(out, "csv")))
    frame.write.json(os.path.join(out, "json"))
    session.stop()


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"pyarrow-read": pyarrow_read, "spark-read": spark_read, "pyarrow-write": pyarrow_write,
     "pyarrow-write-nested": pyarrow_write_nested, "spark-write": spark_write}[command](*args)
