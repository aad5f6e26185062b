# attnviz: a thin wrapper over CMake presets. The two README commands are `make run` and `make test`.
SHELL := /bin/bash
PORT ?= 8000
export NODE_PATH := /usr/share/nodejs
JOBS ?= $(shell nproc)

.PHONY: all setup configure-native configure-web native-build web-build run test native cli bench clean format format-check \
        sanitize-build fuzz soak

all: native-build web-build

# Installs what is missing (apt-get, apt-get source, npm ci); does nothing when all is there.
setup:
	@bash scripts/setup.sh

configure-native: setup
	@test -f build/native/build.ninja || cmake --preset native

configure-web: setup
	@test -f build/web/build.ninja || cmake --preset web

native-build: configure-native
	cmake --build --preset native -j $(JOBS)

web-build: configure-web
	cmake --build --preset web -j $(JOBS)

# Builds the web app (Release, -O3 -msimd128, WebGL2) and serves it on 127.0.0.1:$(PORT).
run: configure-web
	cmake --build --preset web --target attnviz attnviz_web_files -j $(JOBS)
	node scripts/serve.mjs build/web/app $(PORT)

# Checks the C++ format first (fails fast, before building), then builds native and web and
# runs every test (native, WASM under node, browser, and the ASan + UBSan + fuzz build of
# build/sanitize) through ctest. On a failure scripts/test_failures.sh then prints what the failed
# tests said (their failure lines), after the summary, where a log cut to its tail still shows it.
test: format-check native-build web-build sanitize-build
	ctest --preset native -j 2 || { bash scripts/test_failures.sh build/native; exit 1; }

# C++ sources (src/, tests/, bench/) against .clang-format with Debian's clang-format 14.
# format-check lists the files that differ and fails; format rewrites them in place.
format-check: setup
	@bash scripts/format_check.sh

format: setup
	@bash scripts/format.sh

# clang-14 build with ASan + UBSan (+ libFuzzer coverage) of the core, io, CLI and lazy-app unit tests, the
# CLI and the fuzz targets (tests/fuzz). make test runs them from the native ctest.
SANITIZE_DIR := build/sanitize
SANITIZE_TARGETS := core_tests io_tests hostile_tests cli_tests big_tests lazy_app_tests attnviz-cli fuzz_npy fuzz_npz \
                    fuzz_json fuzz_attention fuzz_safetensors
sanitize-build: setup
	@test -f $(SANITIZE_DIR)/build.ninja || CC=clang-14 CXX=clang++-14 cmake -S . -B $(SANITIZE_DIR) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DATTNVIZ_FUZZ=ON
	cmake --build $(SANITIZE_DIR) --target $(SANITIZE_TARGETS) -j $(JOBS)

# Fuzzes every reader for FUZZ_TIME seconds each (default 300); findings in build/sanitize/fuzz-findings.
FUZZ_TIME ?= 300
fuzz: sanitize-build
	bash scripts/fuzz.sh --time $(FUZZ_TIME)

# An hour of animation, then an hour of opening and closing files, each with a flat-memory check
# (tests/soak; make test runs a 60 s version natively and as WASM).
SOAK_SECONDS ?= 3600
soak: configure-native
	cmake --build --preset native --target attnviz_soak -j $(JOBS)
	./build/native/tests/attnviz_soak --seconds $(SOAK_SECONDS) tests/io/data/attention_lhqk.npz \
	  tests/fuzz/seeds/attention/v1.json

# Builds and starts the desktop app.
native: native-build
	./build/native/attnviz

cli: configure-native
	cmake --build --preset native --target attnviz-cli -j $(JOBS)
	@echo "built build/native/attnviz-cli"

# Benchmarks: attention kernels, training to target, UI frame time, big files; native and WASM.
BIG_NPY ?= /tmp/attnviz_bench_151mb.npy
bench: configure-native configure-web
	cmake --build --preset native --target attnviz_bench attnviz_train_bench attnviz -j $(JOBS)
	cmake --build --preset web --target attnviz_bench attnviz_train_bench attnviz_bench_module -j $(JOBS)
	@echo "== attention kernels, native"; ./build/native/bench/attnviz_bench
	@echo "== attention kernels, wasm (node)"; node --no-experimental-fetch build/web/bench/attnviz_bench.js
	@echo "== attention kernels vs onnxruntime-web and tfjs-wasm (node, relaxed SIMD on as in Chromium)"; \
	  node --no-experimental-fetch --experimental-wasm-relaxed-simd bench/peers/run.mjs build/web/bench/attnviz_bench_module.js
	@echo "== attention pass by pass: Q K^T, softmax, P V (wasm, node)"; \
	  node --no-experimental-fetch --experimental-wasm-relaxed-simd bench/peers/phases.mjs build/web/bench/attnviz_bench_module.js
	@echo "== attention's query-row block, A/B in one process (wasm, node)"; \
	  node --no-experimental-fetch --experimental-wasm-relaxed-simd bench/peers/row_block.mjs build/web/bench/attnviz_bench_module.js
	@echo "== training to target, native"; ./build/native/bench/attnviz_train_bench bahdanau
	@echo "== training to target, wasm (node)"; node --no-experimental-fetch build/web/bench/attnviz_train_bench.js bahdanau
	@echo "== live training in the browser's Web Worker"; cmake --build --preset web --target attnviz attnviz_web_files -j $(JOBS) >/dev/null; node bench/train_browser_bench.mjs bahdanau
	@echo "== UI frame CPU time, native (xvfb)"; bash scripts/ui_bench.sh
	cmake --build --preset web --target attnviz attnviz_web_files -j $(JOBS)
	@echo "== UI frame CPU time, browser (WASM, headless Chromium)"; node bench/ui_browser_bench.mjs
	@echo "== web bundle size and first frame (headless Chromium)"; node bench/bundle_bench.mjs
	@echo "== what a drawn frame costs headless Chromium's software renderer"; node bench/frame_browser_bench.mjs
	@echo "== the same for the grid of a lazily read 1024-head file"; VIEW=grid-lazy node bench/frame_browser_bench.mjs
	cmake --build --preset native --target attnviz_load_bench -j $(JOBS)
	@echo "== F16 weights decoded to float, native and wasm (node)"; cmake --build --preset native --target attnviz_decode_bench -j $(JOBS) >/dev/null; \
	  ./build/native/bench/attnviz_decode_bench; cmake --build --preset web --target attnviz_decode_bench -j $(JOBS) >/dev/null; \
	  node --no-experimental-fetch build/web/bench/attnviz_decode_bench.js
	@echo "== big files: a 151 MB .npy opened natively, whole-file vs streamed"
	@test -f $(BIG_NPY) || ./build/native/bench/attnviz_load_bench --make $(BIG_NPY)
	./build/native/bench/attnviz_load_bench --mode old $(BIG_NPY)
	./build/native/bench/attnviz_load_bench --mode stream $(BIG_NPY)
	@echo "== big files: the same in headless Chromium"; node bench/load_browser_bench.mjs $(BIG_NPY)
	@echo "== LLM-sized: a 32 GiB safetensors file read lazily in headless Chromium"; node bench/lazy_browser_bench.mjs
	@echo "== heatmap texture uploads, R16F vs R32F, in headless Chromium"; node bench/upload_browser_bench.mjs
	@echo "== HTTP Range reads in headless Chromium: the HTTP cache, and frames kept vs drawn"; node bench/range_browser_bench.mjs
	@echo "== Python's self-contained pages with a BERT-base's attention: stored vs deflated data"; node bench/inline_browser_bench.mjs

clean:
	rm -rf build
