"""One local Spark for the tests that need it: ``local[2]`` on 127.0.0.1, no UI, started once per pytest process.

Spark needs Java 17 or later (``.ci/run`` installs it when ``java`` is missing); on CI a missing Java or PySpark
fails the test, elsewhere it skips.  The JVM is stopped when the process ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys

import pytest

_SESSION = None


def spark_session():
    """The process's SparkSession (``local[2]``), created on first use."""
    global _SESSION
    if _SESSION is not None:
        return _SESSION
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if shutil.which("java") is None:
        (pytest.fail if ci else pytest.skip)("Spark needs Java 17 or later (java is not on PATH)")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        (pytest.fail if ci else pytest.skip)("pyspark is not installed (dpdist[spark])")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    _SESSION = (
        SparkSession.builder.master("local[2]").appName("dpdist-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    _SESSION.sparkContext.setLogLevel("ERROR")
    atexit.register(_SESSION.stop)
    return _SESSION
