"""Production corpora: stream recorded traces through every predicate and count what they show.

:mod:`~bench.corpus.record` is what every source yields; :mod:`~bench.corpus.decode` reads the corpus
JSON-lines and Parquet formats; :mod:`~bench.corpus.sources` finds the reader for a path (those two,
or a production importer); :mod:`~bench.corpus.tags` derives the edge-case tags of a sequence;
:mod:`~bench.corpus.aggregate` decides and counts one shard; :mod:`~bench.corpus.run` runs the
shards locally or on a Dask cluster and merges; :mod:`~bench.corpus.output` writes Parquet, CSV
and the HTML page; :mod:`~bench.corpus.generate` makes a deterministic field-like corpus.
"""
