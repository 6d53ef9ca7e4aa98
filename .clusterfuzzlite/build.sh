#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ into $OUT, each with its seed
# corpus ($OUT/<target>_seed_corpus.zip) and libFuzzer options
# (<target>.options), as ClusterFuzzLite and OSS-Fuzz expect.
#
# Inside the builder image: SRC, OUT and SANITIZER are set by the image.
# Locally, on the stable toolchain (a check that the layout builds):
#   OUT=/tmp/cflite-out SANITIZER=none .clusterfuzzlite/build.sh
if [ -d "${SRC:-}/xlaref" ]; then
  cd "$SRC/xlaref"                 # the image: the Dockerfile copied it there
else
  cd "$(dirname "$0")/.."          # a checkout
fi
SANITIZER="${SANITIZER:-address}"
if [ "$SANITIZER" = none ]; then
  sanitizer_flag=(-s none)
else
  sanitizer_flag=()   # cargo fuzz's default: address, as the image asks
fi
mkdir -p "$OUT"
# Release with debug assertions, the image's usual choice for Rust (-O).
(cd fuzz && cargo fuzz build -O "${sanitizer_flag[@]}")
triple=$(rustc -vV | sed -n 's/^host: //p')
./fuzz/seed-corpus.sh >/dev/null
for target in $(cd fuzz && cargo fuzz list); do
  cp "fuzz/target/$triple/release/$target" "$OUT/"
  if [ -d "fuzz/corpus/$target" ] && [ -n "$(ls -A "fuzz/corpus/$target")" ]; then
    (cd "fuzz/corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
  # The limits every target is written for (fuzz/README.md), and the
  # dictionary of the grammar it reads (fuzz/dicts/make.py).
  dict=""
  case "$target" in
    parse_verify_eval) dict=json ;;
    hlo_import) dict=hlo ;;
    mlir_import) dict=mlir ;;
  esac
  if [ -n "$dict" ]; then
    cp "fuzz/dicts/$dict.dict" "$OUT/$target.dict"
    printf '[libfuzzer]\nrss_limit_mb = 4096\ntimeout = 30\ndict = %s.dict\n' "$target" > "$OUT/$target.options"
  else
    printf '[libfuzzer]\nrss_limit_mb = 4096\ntimeout = 30\n' > "$OUT/$target.options"
  fi
done
