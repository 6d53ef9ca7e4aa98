#!/usr/bin/env bash
# Seeds fuzz/corpus/parse_verify_eval with every oracle case file.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/parse_verify_eval
find ../oracle-cases -name '*.json' | while read -r f; do
  cp "$f" "corpus/parse_verify_eval/$(echo "$f" | tr '/' '_')"
done
echo "seeded $(ls corpus/parse_verify_eval | wc -l) files"
