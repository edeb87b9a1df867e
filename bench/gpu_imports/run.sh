# The README's GPU host table: `wheeldoctor imports` on the heavy GPU packages and on test modules
# that initialise the driver at import time. Run on a machine with a GPU, from anywhere:
#   OUT=/some/dir bash bench/gpu_imports/run.sh
# Each module's JSON goes to $OUT/json/, the text reports to $OUT/text.txt.
root="$(cd "$(dirname "$0")/../.." && pwd)"
export PYTHONPATH="$root:$root/bench/gpu_imports/cases" PYTHONUNBUFFERED=1
out="${OUT:-/tmp/gpu_imports}"
mkdir -p "$out/json"
for m in torch case_torch_cuda cuda.bindings.driver case_cuinit seedpkg jax case_jax_devices cupy numba.cuda triton transformers wheeldoctor; do
  python3 -m wheeldoctor imports "$m" --json --forbid '' --timeout 240 > "$out/json/$m.json" 2> "$out/json/$m.err"
  echo "$m rc=$?"
  python3 -m wheeldoctor imports "$m" --forbid gpu-init,threads,processes --timeout 240 2>/dev/null
done > "$out/text.txt" 2>&1
# Whole-process import times without the probe, for comparison.
for m in torch cuda.bindings.driver jax cupy numba.cuda triton transformers; do
  python3 - "$m" <<'PY'
import subprocess, sys, time
t = time.perf_counter()
subprocess.run([sys.executable, "-B", "-c", "import " + sys.argv[1]], capture_output=True)
print(sys.argv[1], "plain python -c import, whole process: %.3f s" % (time.perf_counter() - t))
PY
done >> "$out/text.txt" 2>&1
cat "$out/text.txt"
