#!/usr/bin/env bash
# Seeds the corpora: parse_verify_eval with every oracle case file,
# hlo_import with the HLO text and mlir_import with the StableHLO text of
# every case whose module is text (oracle-cases/programs/). A StableHLO
# checkout's test files make good mlir_import seeds too. diff_programs needs no seeds: any bytes pick a
# generator and a seed.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/parse_verify_eval corpus/hlo_import corpus/mlir_import corpus/diff_programs
find ../oracle-cases -name '*.json' | while read -r f; do
  cp "$f" "corpus/parse_verify_eval/$(echo "${f#../}" | tr '/' '_')"
done
python3 - <<'PY'
import glob, json, os
for path in glob.glob("../oracle-cases/**/*.json", recursive=True):
    doc = json.load(open(path))
    for case in doc.get("cases", [doc]):
        module = case.get("module")
        if isinstance(module, str):
            mlir = not module.lstrip().startswith("HloModule")
            target, suffix = ("mlir_import", ".mlir") if mlir else ("hlo_import", ".hlo")
            name = path.replace("../", "").replace("/", "_").replace(".json", suffix)
            open(os.path.join("corpus", target, name), "w").write(module)
PY
echo "seeded $(ls corpus/parse_verify_eval | wc -l) JSON, $(ls corpus/hlo_import | wc -l) HLO and $(ls corpus/mlir_import | wc -l) MLIR files"
