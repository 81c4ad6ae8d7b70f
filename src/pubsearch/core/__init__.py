"""The core every other package stands on: configuration from the environment
(:mod:`.config`), the error types (:mod:`.errors`), arrays saved beside an index and read
mapped (:mod:`.npzfiles`), the C speedups loaded on first use (:mod:`.speedups`), memory
handed back to the system (:mod:`.memory`) and the garbage collector paused around a build
(:mod:`.gcpause`).

May import: the standard library, numpy. Nothing of pubsearch's own outside ``core``.
"""
