"""Do pubsearch's vectors match the model's reference implementation?

pubsearch runs all-MiniLM-L6-v2 as an ONNX graph on onnxruntime (src/pubsearch/embedding.py).
This script embeds the same texts with sentence-transformers (torch), the model's reference
implementation, and prints the cosine of each pair: float32 should be at least 0.999.

The reference needs torch and sentence-transformers, which pubsearch does not install. Give a
Python that has them with ``--reference-python`` (it reads the model from this side's
installed package, so it needs no copy of its own), e.g.::

    python3 -m venv /tmp/ref
    /tmp/ref/bin/pip install torch==2.13.0 sentence-transformers==6.3.0
    python bench/embedding_check.py --reference-python /tmp/ref/bin/python

The texts are titles and abstracts of arXiv records (the first ``--count`` of ``--records``).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

DEFAULT_RECORDS = (
    Path(__file__).resolve().parents[1] / "../shared/data/arxiv-2024-2026/records.jsonl.gz"
)


def reference_vectors(model_folder: str, texts_file: str, out_file: str) -> None:
    """Run inside the reference Python: sentence-transformers' vectors for the texts."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_folder, device="cpu")
    texts = json.loads(Path(texts_file).read_text())
    vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
    np.save(out_file, np.asarray(vectors, dtype=np.float32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--reference-python", required=True)
    parser.add_argument("--reference", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        reference_vectors(*args.reference)
        return

    from pubsearch.index import embedding

    with gzip.open(args.records, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in itertools.islice(lines, args.count)]
    texts = [embedding.record_text(r.get("title", ""), r.get("abstract", "")) for r in records]
    with tempfile.TemporaryDirectory() as scratch:
        texts_file = Path(scratch) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        out_file = Path(scratch) / "reference.npy"
        subprocess.run(
            [
                args.reference_python,
                __file__,
                "--reference-python",
                args.reference_python,
                "--reference",
                str(embedding.model_dir()),
                str(texts_file),
                str(out_file),
            ],
            check=True,
        )
        reference = np.load(out_file)
    print(f"{len(texts)} texts, {embedding.MODEL_NAME}, reference: sentence-transformers")
    print("| graph | min cosine | mean cosine | texts ≥ 0.999 |")
    print("|---|---|---|---|")
    for quantised in (False, True):
        ours = embedding.Embedder(quantised=quantised).embed(texts)
        cosines = (ours * reference).sum(axis=1)
        label = "int8 weights" if quantised else "float32"
        share = int((cosines >= 0.999).sum())
        print(f"| {label} | {cosines.min():.5f} | {cosines.mean():.5f} | {share} of {len(texts)} |")


if __name__ == "__main__":
    sys.exit(main())
