"""Spark's own samples, for the fixture Kindling's are checked against (`packages/driver/test/fixtures/
spark-sampling.json`): RDD.sample, takeSample and randomSplit of Spark's JVM API (PySpark's Python RDDs sample
with Python's generator instead), over the integers 0…n-1 parallelized into a number of slices, for each case.
Needs pyspark (4.3.0, as scripts/pyspark.ts installs it) and Java 17.

    python3 scripts/compat/sampling_peer.py > packages/driver/test/fixtures/spark-sampling.json
"""
import json
import sys

from pyspark import SparkConf, SparkContext

# (records, slices, withReplacement, fraction, seed)
SAMPLES = [
    (100, 1, False, 0.5, 42),
    (1000, 4, False, 0.1, 7),
    (1000, 4, False, 0.4, -3),
    (1000, 3, False, 0.75, 123456789),
    (997, 5, False, 0.01, 2024),
    (1000, 4, True, 0.1, 7),
    (1000, 3, True, 0.4, 99),
    (300, 3, True, 0.8, 5),
    (200, 2, True, 2.5, 77),
    (50, 2, False, 1.0, 1),
    (50, 2, False, 0.0, 1),
    (1000, 7, False, 0.5, 0),
    (20000, 4, False, 0.001, 31),
    (20000, 4, False, 0.3, 2**53 - 1),
    (5000, 3, True, 0.05, -(2**40)),
    (30, 2, True, 40.0, 3),
    (60, 2, True, 45.3, 11),
    (4, 2, True, 1234.567, 12),
]
# (records, slices, withReplacement, num, seed)
TAKE_SAMPLES = [
    (1000, 4, False, 10, 42),
    (1000, 4, False, 100, 7),
    (30, 3, False, 50, 5),
    (1000, 4, True, 10, 11),
    (10000, 8, True, 25, 3),
    (50, 2, True, 30, 8),
    (20000, 4, False, 1000, -5),
    (1000, 4, False, 1000, 6),
    (100, 3, True, 100, 13),
    (7, 2, True, 50, 21),
    (3, 1, True, 400, 4),
    # A seed whose first sample is empty: drawn again with the next seed.
    (10, 1, True, 1, 173865),
]
# (records, slices, weights, seed)
RANDOM_SPLITS = [
    (1000, 4, [0.7, 0.3], 42),
    (500, 3, [1.0, 2.0, 1.0], 9),
    (2000, 5, [0.1, 0.2, 0.3, 0.4], 2**40 + 3),
    (100, 2, [0.0, 1.0], 1),
]


def main():
    conf = SparkConf().setMaster("local[1]").setAppName("sampling-peer").set("spark.ui.enabled", "false")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    jvm = sc._jvm

    def jrdd(records, slices):
        items = jvm.java.util.ArrayList()
        for i in range(records):
            items.add(jvm.java.lang.Integer(i))
        return sc._jsc.parallelize(items, slices)

    def ints(java_list):
        return [int(x) for x in java_list]

    out = {"spark": sc.version, "sample": [], "takeSample": [], "randomSplit": []}
    for records, slices, replacement, fraction, seed in SAMPLES:
        sampled = jrdd(records, slices).sample(replacement, float(fraction), seed).collect()
        out["sample"].append({"records": records, "slices": slices, "withReplacement": replacement,
                              "fraction": fraction, "seed": seed, "spark": ints(sampled)})
    for records, slices, replacement, num, seed in TAKE_SAMPLES:
        taken = jrdd(records, slices).takeSample(replacement, num, seed)
        out["takeSample"].append({"records": records, "slices": slices, "withReplacement": replacement,
                                  "num": num, "seed": seed, "spark": ints(taken)})
    for records, slices, weights, seed in RANDOM_SPLITS:
        array = sc._gateway.new_array(jvm.double, len(weights))
        for i, weight in enumerate(weights):
            array[i] = float(weight)
        splits = jrdd(records, slices).randomSplit(array, seed)
        out["randomSplit"].append({"records": records, "slices": slices, "weights": weights, "seed": seed,
                                   "spark": [ints(split.collect()) for split in splits]})
    sc.stop()
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


main()
