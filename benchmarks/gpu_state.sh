# Sourced by the device-call scripts: the GPU's name, driver, temperature, power and SM clock
# at the start of a call, as one CSV beside the results (one format for every call).
gpu_state() {
    nvidia-smi --query-gpu=name,driver_version,temperature.gpu,power.draw,clocks.sm \
        --format=csv > "$1" 2>&1
}

# device_call_start WORK [STATE_DIR]: how a device-call script that starts from scratch begins:
# $OUT must be set (the folder that comes back), the package runs from src/, WORK is emptied,
# and the GPU's state goes to STATE_DIR/gpu.csv (default WORK; STATE_DIR is made too).
device_call_start() {
    : "${OUT:?set OUT to the folder that comes back}"
    export PYTHONPATH=src PYTHONUNBUFFERED=1
    rm -rf "$1" && mkdir -p "${2:-$1}"
    gpu_state "${2:-$1}/gpu.csv"
}
