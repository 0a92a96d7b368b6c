# Sourced by the device-call scripts: the GPU's name, driver, temperature, power and SM clock
# at the start of a call, as one CSV beside the results (one format for every call).
gpu_state() {
    nvidia-smi --query-gpu=name,driver_version,temperature.gpu,power.draw,clocks.sm \
        --format=csv > "$1" 2>&1
}
