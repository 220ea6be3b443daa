# The Spark side of `pnpm bench spark`: the same jobs as Kindling's bench apps, written with Spark's DataFrame API
# and with its RDD API as a PySpark user writes them (Python functions, run by Python workers; the empty-task job,
# which has no function, on the JVM alone). Run by
# `spark-submit --master local[2] jobs.py JOB API ARGS…`; prints `result <millis>` lines for what the bench times
# inside the app (the whole-run jobs are timed from outside).
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

job, api, *args = sys.argv[1:]
spark = SparkSession.builder.appName(f"bench {job} {api}").getOrCreate()
sc = spark.sparkContext
sc.setLogLevel("ERROR")


def timed(run):
    started = time.perf_counter()
    value = run()
    print(f"result {(time.perf_counter() - started) * 1000:.0f} {value}", flush=True)


if job == "start":
    # The smallest app: one job of one task. Timed from outside, from the command to the process's exit.
    if api == "dataframe":
        spark.range(0, 1, 1, 1).count()
    else:
        sc.parallelize([1], 1).count()

elif job == "empty":
    # One job of one task first (as Kindling's app does), then RUNS jobs of TASKS one-element tasks.
    runs, tasks = int(args[0]), int(args[1])
    if api == "dataframe":
        spark.range(0, 1, 1, 1).count()
        for _ in range(runs):
            timed(lambda: spark.range(0, tasks, 1, tasks).count())
    else:
        # No Python function is involved, so the RDD is Spark's Java one, reached through py4j: PySpark's own
        # `count` would run a Python function in every task (a job of 10,000 took minutes here).
        jsc = sc._jsc
        jsc.parallelize([1], 1).count()
        items = list(range(tasks))
        for _ in range(runs):
            timed(lambda: jsc.parallelize(items, tasks).count())

elif job == "wordcount":
    # examples/wordcount.ts: words counted, written sorted by count descending then word as `word<TAB>count`
    # lines, the ten most frequent taken, the distinct words counted. Timed from outside (a whole run).
    source, output = args
    if api == "dataframe":
        words = spark.read.text(source).select(F.explode(F.split(F.col("value"), r"\s+")).alias("word"))
        counts = words.where(F.length("word") > 0).groupBy("word").count()
        ordered = counts.orderBy(F.col("count").desc(), F.col("word").asc())
        ordered.select(F.concat_ws("\t", "word", F.col("count").cast("string"))).write.text(output)
        ordered.take(10)
        counts.count()
    else:
        counts = sc.textFile(source).flatMap(lambda line: line.split()).map(lambda word: (word, 1)) \
            .reduceByKey(lambda a, b: a + b)
        ordered = counts.sortBy(lambda pair: (-pair[1], pair[0]))
        ordered.map(lambda pair: f"{pair[0]}\t{pair[1]}").saveAsTextFile(output)
        ordered.take(10)
        counts.count()

elif job == "shuffle":
    # bench/apps/shuffle.ts's sortByKey: RECORDS pairs (skewed key, payload) made on the executors, sorted by key
    # into PARTITIONS partitions. The DataFrame's sort is written to Spark's `noop` sink, which runs it whole.
    records, payload_bytes, partitions, keys = (int(a) for a in args)
    if api == "dataframe":
        u = F.pmod(F.col("id") * F.lit(2654435761), F.lit(4294967296)) / F.lit(4294967296.0)
        pairs = spark.range(0, records, 1, partitions).select(
            F.floor(u * u * F.lit(keys)).cast("int").alias("key"),
            F.rpad(F.lower(F.conv(F.col("id").cast("string"), 10, 36)), payload_bytes, "x").alias("payload"),
        )
        timed(lambda: pairs.orderBy("key").write.format("noop").mode("overwrite").save())
    else:
        def pair(i):
            u = ((i * 2654435761) % 4294967296) / 4294967296
            stamp = ""
            n = i
            while True:
                n, digit = divmod(n, 36)
                stamp = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + stamp
                if n == 0:
                    break
            return (int(u * u * keys), stamp + "x" * (payload_bytes - len(stamp)))

        timed(lambda: sc.range(0, records, 1, partitions).map(pair).sortByKey(True, partitions).count())

else:
    raise SystemExit(f"unknown job {job}")

spark.stop()
